"""What assembly hands back: the layers delivered for one turn and the budget they kept to.

Its own module so rendering (`beliefs.context.render`) reads it without importing assembly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from beliefs.context.contested import Contradiction
from beliefs.model.record import AnyBelief
from beliefs.model.rules import Rule
from beliefs.search.matcher import Hit


@dataclass
class Budget:
    max_beliefs: int
    limit_tokens: int | None
    used_tokens: int = 0
    shed_ids: list[str] = field(default_factory=list)
    shed_reason: dict[str, str] = field(default_factory=dict)
    # pinned beliefs past the pinned cap, shed as "max_pinned" before any of `shed_ids`: the
    # same for every turn of the user's standing layers, so kept once, not copied per turn
    over_pinned: Sequence[str] = ()

    @property
    def shed(self) -> list[tuple[str, str]]:
        """Every shed belief's id and why, in the order they were shed."""
        return [(i, "max_pinned") for i in self.over_pinned] + [
            (i, self.shed_reason[i]) for i in self.shed_ids
        ]

    def as_dict(self) -> dict[str, object]:
        return {
            "max_beliefs": self.max_beliefs,
            "limit_tokens": self.limit_tokens,
            "used_tokens": self.used_tokens,
            "shed": [{"id": i, "reason": why} for i, why in self.shed],
        }


@dataclass
class Context:
    persona: str
    pinned: list[AnyBelief]
    relevant: list[Hit]
    open_questions: list[AnyBelief]
    budget: Budget
    query: str = ""
    templates: dict[str, Rule] = field(default_factory=dict)  # belief id -> its template rule
    standing_text: str | None = None  # the rendered system block, once computed
    lines: dict[str, str] = field(default_factory=dict)  # belief id -> its rendered hit line
    persona_ids: list[str] = field(default_factory=list)  # pinned beliefs the persona carries
    # delivered beliefs a turn contradicted, with what it claimed, while no one has decided
    contradictions: list[tuple[AnyBelief, tuple[Contradiction, ...]]] = field(default_factory=list)

    def injected_ids(self) -> dict[str, list[str]]:
        """Every belief delivered, by layer: those the persona carries included."""
        return {
            "persona": list(self.persona_ids),
            "pinned": [b.id for b in self.pinned],
            "relevant": [h.belief.id for h in self.relevant],
            "open_questions": [b.id for b in self.open_questions],
        }

    @property
    def count(self) -> int:
        return (
            len(self.persona_ids) + len(self.pinned) + len(self.relevant) + len(self.open_questions)
        )

    @property
    def empty(self) -> bool:
        return not self.persona and self.count == 0
