"""What a compaction run decides, before anything is written: the plan a dry run prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from beliefs.model.models import Belief

MergeOrigin = Literal["duplicate", "model"]
AliasOrigin = Literal["re-explained", "model"]


@dataclass(frozen=True)
class Merge:
    """Sources retired into one new belief that supersedes each of them."""

    source_ids: tuple[str, ...]
    survivor: Belief
    origin: MergeOrigin
    reason: str

    def describe(self) -> dict[str, Any]:
        return {
            "action": "merge",
            "origin": self.origin,
            "source_ids": list(self.source_ids),
            "survivor_id": self.survivor.id,
            "canonical_name": self.survivor.canonical_name,
            "aliases": list(self.survivor.aliases),
            "content": self.survivor.content,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Contradiction:
    """Two live beliefs that cannot both hold: a conflict for review, never auto-resolved."""

    existing_id: str
    other_id: str
    reason: str

    def describe(self) -> dict[str, Any]:
        return {
            "action": "conflict",
            "existing_id": self.existing_id,
            "other_id": self.other_id,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class AliasAddition:
    """Names the user used for a belief that become aliases (the alias flywheel)."""

    belief_id: str
    aliases: tuple[str, ...]
    origin: AliasOrigin
    evidence: str

    def describe(self) -> dict[str, Any]:
        return {
            "action": "alias",
            "belief_id": self.belief_id,
            "aliases": list(self.aliases),
            "origin": self.origin,
            "evidence": self.evidence,
        }


@dataclass(frozen=True)
class Upkeep:
    """One time-driven change: promote an inferred belief, expire one, purge a deleted row."""

    action: Literal["promote", "expire", "purge"]
    belief_id: str
    reason: str

    def describe(self) -> dict[str, Any]:
        return {"action": self.action, "belief_id": self.belief_id, "reason": self.reason}


@dataclass
class ClusterPlan:
    """Beliefs of one scope linked by shared names, and what to do with them (one transaction)."""

    user_id: str
    scope_key: str
    beliefs: list[Belief]
    merges: list[Merge] = field(default_factory=list)
    contradictions: list[Contradiction] = field(default_factory=list)
    aliases: list[AliasAddition] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def ids(self) -> list[str]:
        return [b.id for b in self.beliefs]

    @property
    def empty(self) -> bool:
        return not (self.merges or self.contradictions or self.aliases)

    def changes(self) -> list[dict[str, Any]]:
        items = [
            *(m.describe() for m in self.merges),
            *(c.describe() for c in self.contradictions),
            *(a.describe() for a in self.aliases),
        ]
        return [{"user_id": self.user_id, "scope": self.scope_key, **i} for i in items]
