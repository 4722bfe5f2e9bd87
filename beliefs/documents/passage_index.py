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
from functools import lru_cache

from beliefs.model.record import AnyBelief
from beliefs.text.lexicon import is_common, is_function_word, is_general, stem
from beliefs.text.query import STOP_WORDS, clean_query, query_words

K1 = 1.2
B = 0.75
TITLE_WEIGHT = 2.5  # a word of the passage's own heading
PATH_WEIGHT = 0.5  # a word of a heading above it (its siblings share those)
ALIAS_WEIGHT = 1.5
MIN_SCORE = 3.0
RELATIVE_FLOOR = 0.7  # of the best hit's score
MAX_TERMS = 32
ANCHOR_SHARE = 0.005  # a word in more of the passages than this finds none by itself
MIN_ANCHOR_DF = 50  # ... unless it is in this few (a small corpus)
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
    terms: frozenset[str]  # every term of every field
    names: frozenset[str]  # its own heading's and its aliases' terms


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
    """Passages of one user; `add`/`discard` keep it in step with the store.

    A search weighs only candidates: passages that hold a query word few passages share
    (a word in more than `ANCHOR_SHARE` of them names none), or whose headings or aliases
    hold one. Every query word then counts toward a candidate's score.
    """

    def __init__(self) -> None:
        self.docs: dict[str, _Doc] = {}
        self.postings: dict[str, set[str]] = {}  # every field
        self.named: dict[str, set[str]] = {}  # own heading and aliases only
        self.scopes: Counter[str] = Counter()  # passages per scope
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
        every = frozenset(body) | heading | alias
        doc = _Doc(belief, body, sum(body.values()), heading, title, alias, every, title | alias)
        self.docs[belief.id] = doc
        self.scopes.update(belief.scope)
        self.total_length += doc.length
        for term in every:
            self.postings.setdefault(term, set()).add(belief.id)
        for term in doc.names:  # not the headings above: every sibling shares those
            self.named.setdefault(term, set()).add(belief.id)

    def discard(self, belief_id: str) -> None:
        doc = self.docs.pop(belief_id, None)
        if doc is None:
            return
        self.scopes.subtract(doc.belief.scope)
        self.total_length -= doc.length
        for table, found in ((self.postings, doc.terms), (self.named, doc.names)):
            for term in found:
                ids = table.get(term)
                if ids is not None:
                    ids.discard(belief_id)
                    if not ids:
                        del table[term]

    def candidates(self, asked: dict[str, _Asked]) -> set[str]:
        cap = max(MIN_ANCHOR_DF, ANCHOR_SHARE * len(self.docs))
        out: set[str] = set()
        for term, one in asked.items():
            ids = self.postings[term]
            if not one.general and len(ids) <= cap:
                out |= ids
                continue
            named = self.named.get(term)
            if named and len(named) <= cap:
                out |= named
        return out

    def search(
        self, query: str, accept: Callable[[AnyBelief], bool], *, limit: int = 5
    ) -> list[PassageHit]:
        """The passages `accept` allows that the query is about, best first."""
        asked = {a.term: a for a in _query_terms(query) if a.term in self.postings}
        if not asked:
            return []
        n = len(self.docs)
        avgdl = max(1.0, self.total_length / n)
        weights = {
            t: math.log(1.0 + (n - len(self.postings[t]) + 0.5) / (len(self.postings[t]) + 0.5))
            for t in asked
        }
        wanted = set(asked)
        substantial = {t for t, a in asked.items() if not a.general}
        rare = {t for t, a in asked.items() if a.rare and not a.general}
        found: list[tuple[float, str, frozenset[str]]] = []
        for bid in self.candidates(asked):
            doc = self.docs[bid]
            shared = doc.terms & wanted
            if not _evidence(doc, shared, substantial, rare):
                continue
            norm = K1 * (1 - B + B * doc.length / avgdl)
            score = 0.0
            for term in shared:
                tf = doc.body.get(term, 0)
                part = tf * (K1 + 1) / (tf + norm) if tf else 0.0
                if term in doc.title:
                    part += TITLE_WEIGHT
                elif term in doc.heading:
                    part += PATH_WEIGHT
                if term in doc.alias:
                    part += ALIAS_WEIGHT
                score += weights[term] * part
            if score >= MIN_SCORE and accept(doc.belief):
                found.append((score, bid, shared))
        if not found:
            return []
        found.sort(key=lambda f: (-f[0], f[1]))
        floor = found[0][0] * RELATIVE_FLOOR
        words_of = {t: i for i, t in enumerate(asked)}  # query order
        return [
            PassageHit(
                self.docs[bid].belief,
                score,
                tuple(asked[t].word for t in sorted(shared, key=words_of.__getitem__)),
            )
            for score, bid, shared in found[:limit]
            if score >= floor
        ]


def _query_terms(query: str) -> list[_Asked]:
    """Each distinct indexed word of the query, and each pair of adjacent words written as
    one ("roll back" finds "rollback")."""
    out: dict[str, _Asked] = {}
    pieces = [p for word in query_words(clean_query(query)) for p in words(word)]
    for piece in pieces:
        asked = _asked(piece)
        if asked is not None:
            out.setdefault(asked.term, asked)
    for first, second in itertools.pairwise(pieces):
        if first not in STOP_WORDS and second not in STOP_WORDS:
            joined = _asked(first + second)
            if joined is not None:
                out.setdefault(joined.term, joined)
    return list(out.values())[:MAX_TERMS]


@lru_cache(maxsize=100_000)
def _asked(piece: str) -> _Asked | None:
    """What one query word counts for (None: a word of any sentence); a compound
    ("on-call", "k8s") is never too general."""
    if not _indexed(piece):
        return None
    general = piece.isalpha() and is_general(piece)
    return _Asked(piece, stem(piece), not is_common(piece), general)


def _evidence(doc: _Doc, shared: frozenset[str], substantial: set[str], rare: set[str]) -> bool:
    """Whether the words a turn shares with a passage say the turn is about it: the whole of
    its own heading, or a rare word naming it (in its heading or aliases), or two words of
    substance (a word too general to count counts where the passage is named by it)."""
    named = shared & doc.names
    content = (shared & substantial) | named
    if doc.title and doc.title <= shared and content:
        return True
    return bool(named & rare) or len(content) >= 2
