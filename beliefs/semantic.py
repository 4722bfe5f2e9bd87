"""Optional semantic recall: embedding neighbours of a turn, fused with the name matches.

Off unless an encoder is attached to the index (`BeliefIndex.semantic`; the proxy does so for
TENURE_SEMANTIC=1). Each belief is embedded once (its name and content) when first needed and
again only when that text changes. A neighbour counts only at or above FLOOR cosine
similarity; the two ranked lists are fused by reciprocal rank (RRF_K), so a belief both
lists hold rises and one only meaning finds can still enter below the name matches.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from beliefs.models import Belief

if TYPE_CHECKING:
    from beliefs.index import BeliefIndex, IndexedDoc

FLOOR = 0.5  # cosine similarity a neighbour needs (all-MiniLM-L6-v2)
RRF_K = 60  # the usual reciprocal-rank constant
MAX_NEIGHBOURS = 20


class Encoder(Protocol):
    def encode(self, texts: Sequence[str]) -> Any: ...


def belief_text(belief: Belief) -> str:
    return f"{belief.canonical_name.replace('_', ' ')}. {belief.content}".strip()


class SemanticIndex:
    """Vectors of beliefs, kept by id and text; safe to use from any thread."""

    def __init__(self, encoder: Encoder, *, floor: float = FLOOR) -> None:
        self.encoder = encoder
        self.floor = floor
        self._lock = threading.Lock()
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
        query: str,
        accept: Callable[[IndexedDoc], bool],
    ) -> list[tuple[IndexedDoc, float]]:
        """Accepted beliefs at or above the floor, most similar first (at most MAX_NEIGHBOURS).

        `key` is (user id, index version): the matrix is rebuilt only when it changes.
        """
        if not query.strip():
            return []
        ordered, matrix = self._matrix(key, docs)
        if matrix is None:
            return []
        similarities = matrix @ self.encoder.encode([query])[0]
        above = (similarities >= self.floor).nonzero()[0]
        order = above[similarities[above].argsort()[::-1]]
        out: list[tuple[IndexedDoc, float]] = []
        for i in order:
            if accept(ordered[i]):
                out.append((ordered[i], float(similarities[i])))
                if len(out) >= MAX_NEIGHBOURS:
                    break
        return out

    def forget(self, belief_id: str) -> None:
        with self._lock:
            self._vectors.pop(belief_id, None)

    def __len__(self) -> int:
        return len(self._vectors)


def enable(index: BeliefIndex, encoder: Encoder | None = None) -> SemanticIndex:
    """Attach semantic recall to `index` (loading the packaged encoder unless one is given)."""
    if encoder is None:
        from beliefs.encoder import load_encoder

        encoder = load_encoder()
    semantic = SemanticIndex(encoder)
    with index.lock:
        index.semantic = semantic
        index.derived.clear()
    return semantic


def fuse(bm25: Sequence[str], semantic: Sequence[str], k: int = RRF_K) -> list[str]:
    """Reciprocal rank fusion of two ranked id lists (ties keep the name-match order)."""
    scores: dict[str, float] = {}
    for ranked in (bm25, semantic):
        for rank, bid in enumerate(ranked, start=1):
            scores[bid] = scores.get(bid, 0.0) + 1.0 / (k + rank)
    first = {bid: i for i, bid in enumerate([*bm25, *semantic])}
    return sorted(scores, key=lambda bid: (-scores[bid], first[bid]))
