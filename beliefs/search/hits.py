"""What a search returns: hits, the clauses that matched, and the relevance model's verdict."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from beliefs.model.record import AnyBelief

# "part": a code written alone of an alias of several words ("842" of "ASC 842")
Match = Literal["exact", "fuzzy", "stemmed", "name_word", "part", "semantic", "participant"]


@dataclass(frozen=True)
class Clause:
    """One reason a belief matched: the field, the term (query~indexed unless equal), its score,
    how it matched, and for an everyday word what corroborated it."""

    field: str
    term: str
    score: float
    match: Match = "exact"
    corroborated: str | None = None

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "field": self.field,
            "term": self.term,
            "score": round(self.score, 4),
            "match": self.match,
        }
        if self.corroborated is not None:
            out["corroborated"] = self.corroborated
        return out


@dataclass(frozen=True)
class Relevance:
    """The relevance model's verdict on one belief for one turn: each feature's value, the
    logit (weights · features + bias) and the threshold it was held to."""

    features: tuple[tuple[str, float], ...]
    logit: float
    threshold: float

    def as_dict(self) -> dict[str, object]:
        return {
            "logit": round(self.logit, 4),
            "threshold": round(self.threshold, 4),
            "kept": self.logit >= self.threshold,
            "features": {name: round(value, 4) for name, value in self.features if value},
        }


class Hit:
    """A belief that matched, its score and why (the clauses are worked out when first read:
    the proxy never reads them, the recall API and the evaluation do), and for a hit the
    relevance model kept, its features and score against the threshold."""

    __slots__ = ("_clauses", "_explain", "belief", "relevance", "score")

    def __init__(
        self,
        belief: AnyBelief,
        score: float,
        clauses: list[Clause] | None = None,
        *,
        explain: Callable[[], list[Clause]] | None = None,
        relevance: Relevance | None = None,
    ) -> None:
        self.belief = belief
        self.relevance = relevance
        self.score = score
        self._clauses = clauses
        self._explain = explain

    @property
    def clauses(self) -> list[Clause]:
        if self._clauses is None:
            self._clauses = self._explain() if self._explain is not None else []
            self._explain = None
        return self._clauses

    def __repr__(self) -> str:
        return f"Hit({self.belief.id!r}, {self.score:.4f})"
