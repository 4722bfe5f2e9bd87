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


def test_beliefs_of_the_first_user_need_no_owner_entry_each() -> None:
    index = index_of(*(belief(f"a-{i}", f"name_{i}", [f"alias {i}"]) for i in range(5)))
    index.load(belief(f"b-{i}", f"other_{i}", user_id="u2") for i in range(3))
    assert len(index._owner) == 3 and len(index) == 8  # only the second user's are noted
    assert index.record("a-2") is not None and index.record("b-1") is not None
    index.remove("a-2")
    index.remove("b-1")
    assert index.record("a-2") is None and index.record("b-1") is None
    assert len(index) == 6 and len(index.records("u1")) == 4 and len(index.records("u2")) == 2
    index.upsert(belief("a-2", "name_2", user_id="u2"))  # the id now names u2's belief
    assert [r.user_id for r in (index.record("a-2"),) if r] == ["u2"] and len(index) == 7
    assert index.belief_of("u1", "a-2") is None


def test_names_written_as_indexed_are_one_tuple_for_the_record_and_its_tokens() -> None:
    index = index_of(
        belief("b-1", "main_database", ["postgres", "pg"], rejected_alternatives=["mysql"]),
        belief("b-2", "cache", ["Redis"], rejected_alternatives=["memcached"]),
    )
    docs = index.user("u1").docs
    one, two = docs["b-1"], docs["b-2"]
    assert one.aliases == ("postgres", "pg", "mysql") and one.alias_count == 2
    assert one.aliases is one.belief.names  # no tuple of its own for the tokens
    assert one.belief.aliases == ("postgres", "pg")
    assert one.belief.rejected_alternatives == ("mysql",)
    assert two.aliases == ("redis", "memcached") and two.aliases is not two.belief.names


def test_what_search_works_out_is_held_only_by_the_beliefs_it_weighed() -> None:
    index = index_of(belief("b-1", "main_database", ["postgres"]), belief("b-2", "cache"))
    one, two = (index.user("u1").docs[b] for b in ("b-1", "b-2"))
    assert (one.domain, one.proper, one.weighed_by, one.weight) == (None, None, None, 1.0)
    assert not one.worked_out and one == one and one != two
    rules = object()
    one.domain, one.weighed_by, one.weight = frozenset({"databas"}), rules, 2.5
    assert (one.domain, one.proper, one.weighed_by, one.weight) == (
        frozenset({"databas"}),
        None,
        rules,
        2.5,
    )
    assert not two.worked_out and two.weight == 1.0


def test_the_first_word_of_a_rejected_option_is_held_while_a_belief_rejects_it() -> None:
    vcs = belief(
        "v", "git_lfs", ["LFS"], rejected_alternatives=["Plastic SCM / Unity Version Control"]
    )
    font = belief("f", "font_inter", ["Inter"], rejected_alternatives=["Roboto", "0.9% saline"])
    index = index_of(vcs, font)
    assert index.user("u1").rejected_words == {"plastic": "v"}  # not one word, nor a number
    index.remove("v")
    assert index.user("u1").rejected_words == {}
