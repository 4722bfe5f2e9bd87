"""A text index over passages: BM25 on what they say, headings weighted above the body.

Separate from the belief alias index: beliefs are found by the names the extractor wrote for
them, passages by their words. Words are lower-cased and stemmed; stop words and the words of
any sentence ("use", "make") are not indexed. A passage counts as found only with evidence a
turn is about it: a word the user's documents rarely use, or a heading, alias or several
words it shares; a turn that shares only everyday words with a passage finds nothing.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from beliefs.model.record import AnyBelief
from beliefs.text.lexicon import is_common, is_function_word, is_general, stem
from beliefs.text.query import STOP_WORDS, clean_query, query_words

K1 = 1.2
B = 0.75
TITLE_WEIGHT = 2.5  # a word of the passage's own heading
PATH_WEIGHT = 0.5  # a word of a heading above it (its siblings share those)
ALIAS_WEIGHT = 1.5
MIN_SCORE = 3.0
RELATIVE_FLOOR = 0.6  # of the best hit's score
MAX_TERMS = 32
_WORD = re.compile(r"[a-z0-9][a-z0-9+#._-]*[a-z0-9+#]|[a-z0-9]")


def words(text: str) -> list[str]:
    """Lower-cased words of a passage, edge punctuation off, compounds kept (`pg_dump`)."""
    return _WORD.findall(text.lower())


def terms(text: str) -> list[str]:
    """The stems a text is indexed under, in order (repeats kept)."""
    return [stem(w) for w in words(text) if _indexed(w)]


def _indexed(word: str) -> bool:
    return word not in STOP_WORDS and len(word) > 1 and not is_function_word(word)


@dataclass(slots=True)
class _Doc:
    belief: AnyBelief
    body: Counter[str]
    length: int
    heading: frozenset[str]  # every heading of its path
    title: frozenset[str]  # its own (deepest) heading
    alias: frozenset[str]


@dataclass(frozen=True)
class PassageHit:
    belief: AnyBelief
    score: float
    matched: tuple[str, ...]  # the query words that matched


@dataclass(frozen=True)
class _Asked:
    word: str
    term: str
    rare: bool  # not an everyday English word
    general: bool  # too frequent to tie a turn to anything by itself


class PassageIndex:
    """Passages of one user; `add`/`discard` keep it in step with the store."""

    def __init__(self) -> None:
        self.docs: dict[str, _Doc] = {}
        self.postings: dict[str, set[str]] = {}
        self.total_length = 0

    def __len__(self) -> int:
        return len(self.docs)

    def add(self, belief: AnyBelief) -> None:
        self.discard(belief.id)
        prov = belief.provenance
        path = [str(h) for h in prov.get("heading") or ()]
        aliases = " ".join(str(a) for a in prov.get("aliases") or ())
        body = Counter(terms(belief.content))
        heading = frozenset(terms(" ".join(path)))
        title = frozenset(terms(path[-1])) if path else frozenset()
        alias = frozenset(terms(aliases)) - heading  # heading words already count as such
        doc = _Doc(belief, body, sum(body.values()), heading, title, alias)
        self.docs[belief.id] = doc
        self.total_length += doc.length
        for term in {*body, *heading, *doc.alias}:
            self.postings.setdefault(term, set()).add(belief.id)

    def discard(self, belief_id: str) -> None:
        doc = self.docs.pop(belief_id, None)
        if doc is None:
            return
        self.total_length -= doc.length
        for term in {*doc.body, *doc.heading, *doc.alias}:
            ids = self.postings.get(term)
            if ids is not None:
                ids.discard(belief_id)
                if not ids:
                    del self.postings[term]

    def search(
        self, query: str, accept: Callable[[AnyBelief], bool], *, limit: int = 5
    ) -> list[PassageHit]:
        """The passages `accept` allows that the query is about, best first."""
        asked = [a for a in _query_terms(query) if a.term in self.postings]
        if not asked or not self.docs:
            return []
        n = len(self.docs)
        avgdl = max(1.0, self.total_length / n)
        scores: dict[str, float] = {}
        matched: dict[str, list[_Asked]] = {}
        verdicts: dict[str, bool] = {}
        for one in asked:
            ids = self.postings[one.term]
            weight = math.log(1.0 + (n - len(ids) + 0.5) / (len(ids) + 0.5))
            for bid in ids:
                ok = verdicts.get(bid)
                doc = self.docs[bid]
                if ok is None:
                    ok = verdicts[bid] = accept(doc.belief)
                if not ok:
                    continue
                tf = doc.body.get(one.term, 0)
                part = tf * (K1 + 1) / (tf + K1 * (1 - B + B * doc.length / avgdl)) if tf else 0.0
                part += TITLE_WEIGHT if one.term in doc.title else 0.0
                part += (
                    PATH_WEIGHT if one.term in doc.heading and one.term not in doc.title else 0.0
                )
                part += ALIAS_WEIGHT * (one.term in doc.alias)
                scores[bid] = scores.get(bid, 0.0) + weight * part
                matched.setdefault(bid, []).append(one)
        ranked = sorted(
            (
                bid
                for bid in scores
                if scores[bid] >= MIN_SCORE and _evidence(self.docs[bid], matched[bid])
            ),
            key=lambda b: (-scores[b], b),
        )
        if not ranked:
            return []
        floor = scores[ranked[0]] * RELATIVE_FLOOR
        return [
            PassageHit(self.docs[b].belief, scores[b], tuple(a.word for a in matched[b]))
            for b in ranked[:limit]
            if scores[b] >= floor
        ]


def _query_terms(query: str) -> list[_Asked]:
    """Each distinct indexed word of the query, and each pair of adjacent words written as
    one ("roll back" finds "rollback")."""
    out: dict[str, _Asked] = {}
    pieces = [p for word in query_words(clean_query(query)) for p in words(word)]
    for piece in pieces:
        if _indexed(piece):
            term = stem(piece)
            plain = piece.isalpha()  # a compound ("on-call", "k8s") is never too general
            general = plain and is_general(piece)
            out.setdefault(term, _Asked(piece, term, not is_common(piece), general))
    for first, second in itertools.pairwise(pieces):
        joined = first + second
        if first not in STOP_WORDS and second not in STOP_WORDS and _indexed(joined):
            term = stem(joined)
            out.setdefault(term, _Asked(joined, term, not is_common(joined), False))
    return list(out.values())[:MAX_TERMS]


def _evidence(doc: _Doc, found: list[_Asked]) -> bool:
    """Whether the words a turn shares with a passage say the turn is about it: a rare word,
    or the whole of its own heading, or two words of substance (a word too general to count
    counts where the passage writes it as a name or heading)."""
    named = {a.term for a in found if a.term in doc.title or a.term in doc.alias}
    content = {a.term for a in found if not a.general} | named
    if any(a.rare and not a.general for a in found):
        return True
    if doc.title and doc.title <= {a.term for a in found} and content:
        return True
    return len(content) >= 2
