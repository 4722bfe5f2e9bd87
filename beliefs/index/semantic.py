"""Optional semantic recall: embedding neighbours of a turn, fused with the name matches.

Off unless an encoder is attached to the index (`BeliefIndex.semantic`; the proxy does so for
TENURE_SEMANTIC=1). Each belief is embedded once (its name and content) when first needed and
again only when that text changes. A neighbour counts by itself at or above FLOOR cosine
similarity, and from AGREED_FLOOR up when the turn also shares a telling word with the
belief's own text (`beliefs.index.agreement`) and its names matched nothing; the two ranked lists
are fused by reciprocal rank (RRF_K), so a belief both lists hold rises and one only meaning
finds can still enter below the name matches.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from beliefs.index.agreement import document_frequency, shared_word, turn_stems
from beliefs.model.record import AnyBelief
from beliefs.text.lexicon import COMMON_ZIPF, zipf

if TYPE_CHECKING:
    from beliefs.index.indexed_doc import IndexedDoc
    from beliefs.text.query import QueryTerms

Neighbour = tuple["IndexedDoc", float, str | None]  # doc, cosine, the word both share

FLOOR = 0.5  # cosine similarity a neighbour needs by itself (all-MiniLM-L6-v2)
AGREED_FLOOR = 0.3  # ... and with a telling word of the turn in the belief's own text
AGREED_RANK = 1  # ... for the most similar accepted belief only
RARE_SHARE = 0.01  # ... a word at most this share of the user's beliefs hold (at least one)
RRF_K = 60  # the usual reciprocal-rank constant
# The model was trained on English: a turn in another language, or mostly in one, gets no
# neighbours (its pieces of words land near any belief of the same language, whatever it says).
# English when no other language is told in it and at least this share of its words are
# everyday English words.
ENGLISH_SHARE = 0.5
_WORDS = re.compile(r"[^\W\d_]{2,}")
MAX_NEIGHBOURS = 20


class Encoder(Protocol):
    def encode(self, texts: Sequence[str]) -> Any: ...


def belief_text(belief: AnyBelief) -> str:
    return f"{belief.canonical_name.replace('_', ' ')}. {belief.content}".strip()


class SemanticIndex:
    """Vectors of beliefs, kept by id and text; safe to use from any thread."""

    def __init__(
        self, encoder: Encoder, *, floor: float = FLOOR, agreed_floor: float | None = AGREED_FLOOR
    ) -> None:
        self.encoder = encoder
        self.floor = floor
        self.agreed_floor = agreed_floor  # None: no neighbour below `floor` counts
        self.agreed_rank: int | None = AGREED_RANK  # None: at any rank
        self.rare_share: float | None = RARE_SHARE  # None: however many beliefs hold the word
        self._lock = threading.Lock()
        self._frequencies: dict[tuple[str, int], Counter[str]] = {}
        self._vectors: dict[str, tuple[str, Any]] = {}
        self._matrices: dict[tuple[str, int], tuple[list[IndexedDoc], Any]] = {}

    def _matrix(
        self, key: tuple[str, int], docs: Sequence[IndexedDoc]
    ) -> tuple[list[IndexedDoc], Any]:
        """The docs and their vectors as one matrix, kept while `key` (user, version) holds."""
        import numpy as np

        with self._lock:
            cached = self._matrices.get(key)
            if cached is not None:
                return cached
            texts = [belief_text(d.belief) for d in docs]
            missing = [
                (d.belief.id, t)
                for d, t in zip(docs, texts, strict=True)
                if self._vectors.get(d.belief.id, ("",))[0] != t
            ]
            if missing:
                encoded = self.encoder.encode([t for _, t in missing])
                for (bid, text), vector in zip(missing, encoded, strict=True):
                    self._vectors[bid] = (text, vector)
            ordered = list(docs)
            matrix = np.stack([self._vectors[d.belief.id][1] for d in ordered]) if ordered else None
            self._matrices = {k: v for k, v in self._matrices.items() if k[0] != key[0]}
            self._matrices[key] = (ordered, matrix)
            return ordered, matrix

    def neighbours(
        self,
        key: tuple[str, int],
        docs: Sequence[IndexedDoc],
        terms: QueryTerms,
        accept: Callable[[IndexedDoc], bool],
        *,
        named: bool = False,
    ) -> list[Neighbour]:
        """Accepted beliefs that count, most similar first (at most MAX_NEIGHBOURS): at or
        above the floor, or above the agreed floor with a word of the turn in their own text.
        Those weak ones count only for a turn whose names found nothing (`named` false): where
        names found a belief, a weak neighbour beside it was found to be noise.

        `key` is (user id, the user's version): the matrix is rebuilt only when it changes.
        """
        if not english_turn(terms):
            return []
        ordered, matrix = self._matrix(key, docs)
        if matrix is None:
            return []
        similarities = matrix @ self.encoder.encode([terms.cleaned])[0]
        agreed = None if named else self.agreed_floor
        lowest = self.floor if agreed is None else min(self.floor, agreed)
        above = (similarities >= lowest).nonzero()[0]
        order = above[similarities[above].argsort()[::-1]]
        turn: dict[str, str] | None = None
        out: list[Neighbour] = []
        rank = 0
        for i in order:
            doc, cosine = ordered[i], float(similarities[i])
            if not accept(doc):
                continue
            rank += 1
            shared = None
            if cosine < self.floor:
                if self.agreed_rank is not None and rank > self.agreed_rank:
                    break  # the rest are weaker still
                turn = turn_stems(terms) if turn is None else turn
                shared = self._shared(key, ordered, turn, doc)
                if shared is None:
                    continue
            out.append((doc, cosine, shared))
            if len(out) >= MAX_NEIGHBOURS:
                break
        return out

    def _shared(
        self,
        key: tuple[str, int],
        docs: Sequence[IndexedDoc],
        turn: dict[str, str],
        doc: IndexedDoc,
    ) -> str | None:
        """The turn's word `doc`'s own text holds (a rare one, when rarity is asked for)."""
        if self.rare_share is None:
            return shared_word(turn, doc.belief)
        with self._lock:
            frequency = self._frequencies.get(key)
            if frequency is None:
                frequency = document_frequency(d.belief for d in docs)
                self._frequencies = {k: v for k, v in self._frequencies.items() if k[0] != key[0]}
                self._frequencies[key] = frequency
        most = max(1, int(self.rare_share * len(docs)))
        return shared_word(turn, doc.belief, frequency, most)

    def forget(self, belief_id: str) -> None:
        with self._lock:
            self._vectors.pop(belief_id, None)

    def __len__(self) -> int:
        return len(self._vectors)


class SemanticHost(Protocol):
    """What `enable` attaches semantic recall to (`BeliefIndex`, which imports this module)."""

    lock: threading.RLock
    semantic: SemanticIndex | None

    def forget_derived(self) -> None: ...


def english_turn(terms: QueryTerms) -> bool:
    """Whether the turn is English, the one language the model reads: no other language told
    in it (`lexicon.turn_languages`), and at least ENGLISH_SHARE of its words everyday English
    ones ("lightgbm categorical features kaise handle karta hai" is not)."""
    if terms.languages:
        return False
    words = _WORDS.findall(terms.cleaned.lower())
    english_words = sum(1 for w in words if zipf(w) >= COMMON_ZIPF)
    return bool(words) and english_words >= ENGLISH_SHARE * len(words)


def enable(index: SemanticHost, encoder: Encoder | None = None) -> SemanticIndex:
    """Attach semantic recall to `index` (loading the packaged encoder unless one is given)."""
    if encoder is None:
        from beliefs.index.encoder import load_encoder

        encoder = load_encoder()
    semantic = SemanticIndex(encoder)
    with index.lock:
        index.semantic = semantic
        index.forget_derived()
    return semantic


def fuse(bm25: Sequence[str], semantic: Sequence[str], k: int = RRF_K) -> list[str]:
    """Reciprocal rank fusion of two ranked id lists (ties keep the name-match order)."""
    scores: dict[str, float] = {}
    for ranked in (bm25, semantic):
        for rank, bid in enumerate(ranked, start=1):
            scores[bid] = scores.get(bid, 0.0) + 1.0 / (k + rank)
    first = {bid: i for i, bid in enumerate([*bm25, *semantic])}
    return sorted(scores, key=lambda bid: (-scores[bid], first[bid]))
