"""Whether a turn's words agree with a belief's own text: what a weak embedding neighbour needs.

An embedding neighbour far above chance (`semantic.FLOOR`) counts by itself. One nearer to
chance counts only when the turn also shares a telling word with what the belief says (its
content and why_it_matters, not its names, which name matching already weighs): the same
Snowball stem, or two words of the turn written as one in the belief ("roll back" and
"rollback", "time zone" and "timezone"). A telling word is neither a stop word nor a general
one (`lexicon.is_general`: "gets", "back", "use"), so a shared "the" or "need" agrees on
nothing. Meaning and words agreeing is much rarer by chance than either alone.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from itertools import pairwise

from beliefs.model.record import AnyBelief
from beliefs.text.lexicon import is_general, stem
from beliefs.text.query import STOP_WORDS, QueryTerms, normalize_name, written_words

_SPLIT = re.compile(r"[-/]")


def _telling(word: str) -> bool:
    return len(word) > 2 and word not in STOP_WORDS and not is_general(word)


def _forms(word: str) -> list[str]:
    """A word and, when it is hyphenated ("on-call", "cargo-dist"), its parts and it closed up."""
    if not _SPLIT.search(word):
        return [word]
    parts = [p for p in _SPLIT.split(word) if p]
    return [word, "".join(parts), *parts]


def text_stems(belief: AnyBelief) -> frozenset[str]:
    """Stems of the telling words of what the belief says, its names' words left out."""
    names = (belief.canonical_name, *belief.aliases, *belief.rejected_alternatives)
    return _text_stems(belief.content, belief.why_it_matters, names)


@lru_cache(maxsize=100_000)
def _text_stems(content: str, why: str, names: tuple[str, ...]) -> frozenset[str]:
    # A word written as a name ("Mara" mid-sentence, "AWS") that the belief does not list
    # among its names is something it mentions, not what it is about.
    stems = {
        stem(form)
        for text in (content, why)
        for word, named in written_words(text)
        if not named
        for form in _forms(word)
        if _telling(form)
    }
    own = {stem(f) for name in names for w in normalize_name(name).split(" ") for f in _forms(w)}
    return frozenset(stems - own)


def document_frequency(beliefs: Iterable[AnyBelief]) -> Counter[str]:
    """How many of the beliefs hold each stem in their own text."""
    counts: Counter[str] = Counter()
    for belief in beliefs:
        counts.update(text_stems(belief))
    return counts


def turn_stems(terms: QueryTerms) -> dict[str, str]:
    """Stem -> the turn's word(s) for each telling word and each adjacent pair closed up."""
    out: dict[str, str] = {}
    for word in terms.sequence:
        for form in _forms(word):
            if _telling(form):
                out.setdefault(stem(form), form)
    for first, second in pairwise(terms.sequence):
        closed = first + second
        if first.isalpha() and second.isalpha() and _telling(closed):
            out.setdefault(stem(closed), f"{first} {second}")
    return out


def shared_word(
    turn: dict[str, str], belief: AnyBelief, frequency: Counter[str] | None = None, most: int = 1
) -> str | None:
    """The first of the turn's telling words that the belief's own text holds, if any; with
    `frequency`, only a word at most `most` of the user's beliefs hold (a word many of them
    say, like "prefers" in preferences or "app" in an app team's, ties the turn to none)."""
    own = text_stems(belief)
    for word_stem, written in turn.items():
        if word_stem in own and (frequency is None or frequency[word_stem] <= most):
            return written
    return None
