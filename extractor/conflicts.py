"""Deciding conflicts: contradictions the extractor refused to absorb silently.

The table itself (record, get, list) lives in `beliefs.store.conflicts`, shared with compaction.
"""

from __future__ import annotations

import builtins

from beliefs.model.models import Belief, new_belief_id, utcnow
from beliefs.store.belief_store import BeliefStore
from beliefs.store.conflicts import (
    CONFLICT_STATUSES,
    RESOLUTIONS,
    Conflict,
    ConflictStatus,
    Resolution,
    get_conflict,
    list_conflicts,
    mark_resolved,
)
from extractor.errors import ConflictNotFound, ConflictStateError, InvalidResolution
from extractor.replacement import inherit

__all__ = [
    "CONFLICT_STATUSES",
    "RESOLUTIONS",
    "Conflict",
    "ConflictBook",
    "ConflictStatus",
    "Resolution",
]


class ConflictBook:
    """List and resolve conflicts; resolution writes beliefs in the same transaction (they are
    opened with `beliefs.store.conflicts.record_conflict`, shared with compaction)."""

    def __init__(self, store: BeliefStore) -> None:
        self.store = store

    def get(self, conflict_id: str) -> Conflict:
        conflict = get_conflict(self.store, conflict_id)
        if conflict is None:
            raise ConflictNotFound(f"no conflict {conflict_id!r}; list them at GET /api/conflicts")
        return conflict

    def list(
        self,
        *,
        status: str | None = None,
        user_id: str | None = None,
        existing_id: str | None = None,
        limit: int = 100,
    ) -> builtins.list[Conflict]:
        """Newest first."""
        if status is not None and status not in CONFLICT_STATUSES:
            raise InvalidResolution(
                f"unknown conflict status {status!r}; use one of {', '.join(CONFLICT_STATUSES)}"
            )
        return list_conflicts(
            self.store, status=status, user_id=user_id, existing_id=existing_id, limit=limit
        )

    def resolve(self, conflict_id: str, resolution: str, *, actor: str = "operator") -> Conflict:
        """Apply the decision: take_new supersedes, keep_existing rejects, keep_both keeps both.

        Raises:
            InvalidResolution: `resolution` is not one of RESOLUTIONS.
            ConflictNotFound / ConflictStateError: unknown id, already resolved, or the
                existing belief is no longer live (for take_new).
        """
        if resolution not in RESOLUTIONS:
            raise InvalidResolution(
                f"resolution {resolution!r} is not accepted; use one of {', '.join(RESOLUTIONS)}"
            )
        with self.store.transaction():
            conflict = self.get(conflict_id)
            if conflict.status != "open":
                raise ConflictStateError(
                    f"conflict {conflict_id} was already resolved ({conflict.resolution})"
                )
            new_id = conflict.new_id
            if resolution == "take_new":
                new_id = self._take_new(conflict, actor)
            elif resolution == "keep_existing":
                self._keep_existing(conflict, actor)
            else:
                new_id = self._keep_both(conflict, actor)
            mark_resolved(self.store, conflict_id, resolution, new_id=new_id)
        return self.get(conflict_id)

    def _proposal(self, conflict: Conflict) -> Belief:
        if conflict.proposed is not None:
            return conflict.proposed
        if conflict.new_id is not None:
            return self.store.get(conflict.new_id).model_copy(update={"change_log": []})
        raise ConflictStateError(f"conflict {conflict.id} carries no new belief to keep")

    def _take_new(self, conflict: Conflict, actor: str) -> str:
        existing = self.store.get(conflict.existing_id)
        if not existing.is_live:
            raise ConflictStateError(
                f"belief {existing.id} is no longer live; resolve conflict {conflict.id} with "
                "keep_both or keep_existing"
            )
        proposal = self._proposal(conflict)
        now = utcnow()
        replacement = inherit(existing, proposal).model_copy(
            update={
                "id": proposal.id if conflict.new_id is None else new_belief_id(),
                "review_state": "confirmed",
                "updated_at": now,
            }
        )
        reason = f"conflict {conflict.id} resolved: take_new ({conflict.reason})"
        self.store.supersede(existing.id, replacement, reason=reason, actor=actor)
        if conflict.new_id is not None:
            # The standalone copy became the chain's head; hide the duplicate.
            self.store.soft_delete(conflict.new_id, actor=actor)
        return replacement.id

    def _keep_existing(self, conflict: Conflict, actor: str) -> None:
        if conflict.new_id is not None:
            self.store.set_review(conflict.new_id, "rejected", actor=actor)

    def _keep_both(self, conflict: Conflict, actor: str) -> str:
        if conflict.new_id is not None:
            return conflict.new_id
        proposal = self._proposal(conflict)
        name = proposal.canonical_name
        aliases = list(proposal.aliases)
        if self.store.find_live(proposal.user_id, name, proposal.scope) is not None:
            n = 2
            while self.store.find_live(proposal.user_id, f"{name}_{n}", proposal.scope):
                n += 1
            aliases.append(name)
            name = f"{name}_{n}"
        belief = proposal.model_copy(
            update={
                "canonical_name": name,
                "aliases": aliases,
                "review_state": "confirmed",
                "updated_at": utcnow(),
            }
        )
        self.store.create(belief, actor=actor)
        return belief.id
