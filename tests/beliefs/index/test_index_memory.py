"""What the index keeps per belief: the shape of its memory, not its timing."""

from __future__ import annotations

from beliefs.index.user_postings import index_stem
from beliefs.text.lexicon import stem, stem_phrase
from tests.beliefs.factory import belief, index_of


def test_the_index_stems_its_tokens_as_turns_are_stemmed() -> None:
    for token in ("dashboards", "feature flags", "running the nightly builds", "k8s", "x"):
        assert index_stem(token) == stem_phrase(token), token


def test_indexing_a_store_leaves_the_stem_cache_to_turns() -> None:
    misses = stem.cache_info().misses
    index = index_of(
        belief("b-1", "quorbling_gadgets", ["Quorbling Gadgets", "zentraxes"]),
        belief("b-2", "flimmering_sprockets", ["flimmerings"], rejected_alternatives=["vorpals"]),
    )
    assert stem.cache_info().misses == misses  # no word was stemmed through the cache
    postings = index.user("u1")
    assert postings.stem_matches("alias", "zentraxe") == ("zentraxes",)
    assert stem.cache_info().misses > misses  # a turn's word is
