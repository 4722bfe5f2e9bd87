"""What one extraction decided to write: merge produces it, apply lands it in one transaction."""

from __future__ import annotations

from dataclasses import dataclass, field

from beliefs.model.models import Belief
from extractor.schema import Skipped


@dataclass(frozen=True)
class Reinforcement:
    """The turn confirmed a live belief again; new names are unioned in."""

    belief_id: str
    aliases: tuple[str, ...] = ()
    rejected_alternatives: tuple[str, ...] = ()
    promote: bool = False  # inferred -> active: reinforced often enough, long enough


@dataclass(frozen=True)
class Enrichment:
    """New aliases, rejected alternatives or refined content for a live belief, in place."""

    belief_id: str
    aliases: tuple[str, ...] = ()
    rejected_alternatives: tuple[str, ...] = ()
    content: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Supersession:
    """The replacement becomes the chain's head; the old row is stamped, never overwritten."""

    old_id: str
    replacement: Belief
    reason: str


@dataclass(frozen=True)
class ConflictDraft:
    """A contradiction awaiting review: nothing about the existing belief changes until then."""

    existing_id: str
    proposed: Belief
    reason: str


@dataclass(frozen=True)
class Resolution:
    """An open question the turn settled, and the belief that settled it if any."""

    belief_id: str
    resolved_by: str | None = None


@dataclass
class Plan:
    creates: list[Belief] = field(default_factory=list)
    reinforcements: list[Reinforcement] = field(default_factory=list)
    enrichments: list[Enrichment] = field(default_factory=list)
    supersessions: list[Supersession] = field(default_factory=list)
    conflicts: list[ConflictDraft] = field(default_factory=list)
    resolutions: list[Resolution] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not (
            self.creates
            or self.reinforcements
            or self.enrichments
            or self.supersessions
            or self.conflicts
            or self.resolutions
        )
