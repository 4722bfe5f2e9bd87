"""When a name that is an everyday English word counts as naming the belief.

"let's go with the second approach" must not pull in the Go services belief, while
"rewrite it in Go" and "which go version" must. A single-word match whose word is common
(`lexicon.is_common`) and which the belief itself writes as a name (an alias spelled with a
capital, "Go"; a capital where a sentence of its content does not start) counts only when
something else in the turn says the word is meant as the name; so does a very frequent word
(`lexicon.is_general`: "make", "next") however it is written. An everyday word the belief
writes in lower case ("exceptions", "viewpoint") is used in its everyday sense: it is the
topic, and matches as before. Corroboration is one of:

- its written form: a code span, or a capital where a sentence does not start;
- another clause of the same belief matched;
- a word of the belief's own text (content, name, aliases) within `WINDOW` words of it, or
  anywhere in the turn when that word is no everyday one ("onboarding", "kubectl").
"""

from __future__ import annotations

import re

from beliefs.index.indexed_doc import IndexedDoc
from beliefs.text.lexicon import is_common, is_function_word, stem
from beliefs.text.query import STOP_WORDS, QueryTerms, normalize_name, written_words

WINDOW = 2  # words either side: "which go version", "the Spark job", "a click command"
_WORD = re.compile(r"[a-z][a-z0-9+#]*")
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]+\b")

WRITTEN = "written as a name"
OTHER_CLAUSE = "another clause"


def _telling(word: str) -> bool:
    """A word specific enough to tie a turn to a belief (not a stop or function word)."""
    return len(word) > 1 and word not in STOP_WORDS and not is_function_word(word)


def domain_words(doc: IndexedDoc) -> frozenset[str]:
    """Stems of the telling words of the belief's own text (worked out once per document)."""
    if doc.domain is None:
        belief = doc.belief
        text = " ".join([belief.content, belief.canonical_name.replace("_", " "), *belief.aliases])
        doc.domain = frozenset(stem(w) for w in _WORD.findall(text.lower()) if _telling(w))
    return doc.domain


def proper_words(doc: IndexedDoc) -> frozenset[str]:
    """Tokens the belief writes as names: aliases with a capital, capitalised content words,
    acronyms aside unless they spell an everyday word."""
    if doc.proper is None:
        belief = doc.belief
        named = {normalize_name(a) for a in belief.aliases if any(ch.isupper() for ch in a)}
        named.update(w for w, marked in written_words(belief.content) if marked)
        # An acronym ("PG", "CI") is not an everyday word written as a name, unless it spells
        # one ("GUT", a test framework, is "gut" too); a general word ("REST") is gated by its
        # frequency anyway.
        text = " ".join([belief.content, *belief.aliases])
        acronyms = {a.lower() for a in _ACRONYM.findall(text) if not is_common(a.lower())}
        doc.proper = frozenset(named - acronyms)
    return doc.proper


def neighbours(terms: QueryTerms, word: str) -> dict[str, str]:
    """Stems of the telling words within WINDOW of each place `word` stands -> the words."""
    seq = terms.sequence
    out: dict[str, str] = {}
    for i, w in enumerate(seq):
        if w != word:
            continue
        for near in seq[max(0, i - WINDOW) : i + WINDOW + 1]:
            if near != word and _telling(near):
                out.setdefault(stem(near), near)
    return out


def rare_words(terms: QueryTerms) -> dict[str, str]:
    """Stems of the turn's words that are no everyday English words -> the words."""
    return {stem(w): w for w in terms.sequence if _telling(w) and w.isalpha() and not is_common(w)}


class Witness:
    """What can corroborate one common query word, worked out once per word and turn."""

    __slots__ = ("_near", "written")

    def __init__(self, terms: QueryTerms, query_word: str, token: str) -> None:
        self.written = query_word in terms.marked
        own = {stem(w) for w in token.split(" ")} | {stem(query_word)}
        near = {**neighbours(terms, query_word), **rare_words(terms)}
        self._near = {s: w for s, w in near.items() if s not in own}

    def reason(self, doc: IndexedDoc, other_clause: bool) -> str | None:
        """Why the word counts for `doc`, or None when nothing corroborates it."""
        if self.written:
            return WRITTEN
        if other_clause:
            return OTHER_CLAUSE
        if self._near:
            domain = domain_words(doc)
            for near_stem, near_word in self._near.items():
                if near_stem in domain:
                    return f"domain word {near_word!r}"
        return None
