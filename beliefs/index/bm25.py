"""BM25 pieces shared by the matchers: idf, length norms, and Lucene's fuzzy similarity."""

from __future__ import annotations

import math
from functools import lru_cache

from beliefs.model.models import MAX_ALIASES

K1 = 1.2
B = 0.75
TF_NORM_ONE = 1.0 / (1.0 + K1)  # canonical names are one token: field length 1 everywhere


def label(query: str, token: str) -> str:
    """How a clause's term reads: the token, or `query~token` when they differ."""
    return token if query == token else f"{query}~{token}"


def idf(n_docs: int, doc_freq: int) -> float:
    return math.log(1.0 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def within_one_edit(a: str, b: str) -> int | None:
    """Edits (0 or 1, adjacent transposition counting as one) between a and b, else None."""
    if a == b:
        return 0
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return None
    i = 0
    while i < min(la, lb) and a[i] == b[i]:
        i += 1
    if la == lb:
        if a[i + 1 :] == b[i + 1 :]:
            return 1
        if i + 1 < la and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2 :] == b[i + 2 :]:
            return 1
        return None
    longer, shorter = (a, b) if la > lb else (b, a)
    return 1 if longer[i + 1 :] == shorter[i:] else None


def similarity(query: str, token: str, edits: int) -> float:
    """Lucene's fuzzy-term boost: 1 - edits / min(length)."""
    return 1.0 - edits / min(len(query), len(token)) if edits else 1.0


# token -> (score before length norm, field, label, how, the query word or phrase)


@lru_cache(maxsize=256)
def length_norms(avgdl: float) -> tuple[float, ...]:
    """BM25's length normalisation for every possible alias count, given the average."""
    return tuple(1.0 / (1.0 + K1 * (1.0 - B + B * dl / avgdl)) for dl in range(MAX_ALIASES * 2 + 1))
