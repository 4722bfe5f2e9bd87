"""Writes of one belief: create, update, pin, review, reinforce, delete and restore; each
appends its history event in the same transaction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from beliefs.model.errors import CanonicalNameClash, InvalidBelief, reason
from beliefs.model.models import Belief, ReviewState, as_utc, union_names, utcnow
from beliefs.store.always_on import ALWAYS_ON, ALWAYS_ON_REFUSED, always_on_detail
from beliefs.store.history import BeliefHistory
from beliefs.store.invariants import clash_with
from beliefs.store.rule_store import RuleHolding

# Fields only the dedicated operations may change, so chains and deletions stay consistent.
PROTECTED_FIELDS = {
    "id": "ids never change",
    "change_log": "history is append-only",
    "superseded_by": "use supersede",
    "deleted_at": "use soft_delete / restore",
    "shared": "use share (the API's /share and /unshare)",
}


class BeliefWrites(BeliefHistory, RuleHolding):
    """Every write returns the belief as now stored, with its change_log unless
    `with_history` is false (callers that ignore the result save a query)."""

    def create(
        self,
        belief: Belief,
        *,
        actor: str = "operator",
        event: str = "created",
        with_history: bool = True,
    ) -> Belief:
        """Insert a new belief.

        Like every write below, returns the belief as now stored, with its change_log unless
        `with_history` is false (callers that ignore the result save a query).

        Raises:
            InvalidBelief: the id exists or the belief carries a supersession link.
            CanonicalNameClash: a live belief of the user already has the name in a scope.
        """
        if belief.superseded_by is not None:
            raise InvalidBelief(
                f"a new belief cannot carry superseded_by ({belief.superseded_by}); create it, "
                "then supersede it"
            )
        belief = self._with_default_class(belief)
        with self.transaction():
            if self._exists(belief.id):
                raise InvalidBelief(f"belief id {belief.id} already exists; use a new id")
            self._check_name(belief)
            row = self._insert(belief)
            self._event(belief.id, event, actor, {})
            self._note_always_on(None, row, actor)
        return self._returned(row, with_history)

    def update(
        self,
        belief_id: str,
        changes: Mapping[str, Any],
        *,
        actor: str = "operator",
        event: str = "updated",
        reason: str | None = None,
        with_history: bool = True,
    ) -> Belief:
        """Change fields; the event records old -> new per field. No change, no event."""
        unknown = sorted(set(changes) - set(Belief.model_fields))
        if unknown:
            raise InvalidBelief(
                f"unknown field(s) {', '.join(unknown)}; fields are: "
                + ", ".join(f for f in Belief.model_fields if f not in PROTECTED_FIELDS),
                field=unknown[0],
            )
        for name in changes:
            if name in PROTECTED_FIELDS:
                raise InvalidBelief(
                    f"field {name} cannot be updated: {PROTECTED_FIELDS[name]}", field=name
                )
        return self._change(belief_id, changes, actor, event, reason, with_history)

    def _change(
        self,
        belief_id: str,
        changes: Mapping[str, Any],
        actor: str,
        event: str,
        reason: str | None,
        with_history: bool,
    ) -> Belief:
        with self.transaction():
            old = self._require(belief_id)
            data = {**old.model_dump(), **changes}
            if "updated_at" not in changes:
                data["updated_at"] = utcnow()
            new = validated(data, belief_id)
            diff = changed_fields(old, new)
            if not diff:
                return self._returned(old, with_history)
            if new.superseded_by is not None and new.epistemic_status != "superseded":
                raise InvalidBelief(
                    f"{belief_id} is superseded by {new.superseded_by}; its epistemic_status "
                    "must stay 'superseded'",
                    field="epistemic_status",
                )
            self._check_name(new)
            row = self._write(new)
            detail: dict[str, Any] = {"changes": diff}
            if reason:
                detail["reason"] = reason
            self._event(belief_id, event, actor, detail)
            self._note_always_on(old, row, actor)
        return self._returned(row, with_history)

    def pin(
        self, belief_id: str, pinned: bool, *, actor: str = "operator", with_history: bool = True
    ) -> Belief:
        event = "pinned" if pinned else "unpinned"
        return self.update(
            belief_id, {"pinned": pinned}, actor=actor, event=event, with_history=with_history
        )

    def share(
        self, belief_id: str, shared: bool, *, actor: str = "operator", with_history: bool = True
    ) -> Belief:
        """Share an agent's belief with every agent of its user, or take it back (`shared`
        false); `agent_id` keeps naming the agent that wrote it.

        Raises:
            InvalidBelief: no agent wrote it, so every agent of the user already receives it.
        """
        with self.transaction():
            old = self._require(belief_id)
            if old.agent_id is None:
                raise InvalidBelief(
                    f"{belief_id} belongs to no agent: every agent of {old.user_id!r} already "
                    "receives it, so there is nothing to share or unshare",
                    field="shared",
                )
            event = "shared" if shared else "unshared"
            return self._change(belief_id, {"shared": shared}, actor, event, None, with_history)

    def refuse_always_on(
        self, belief_id: str, asked: Mapping[str, Any], *, actor: str, reason: str
    ) -> None:
        """Record that a write asked for the belief to be always-on (`asked`: the pinned and
        delivery it asked for) and was held back, the belief written without it."""
        with self.transaction():
            self._require(belief_id)
            self._event(
                belief_id, ALWAYS_ON_REFUSED, actor, {"asked": dict(asked), "reason": reason}
            )

    def set_review(
        self,
        belief_id: str,
        state: ReviewState,
        *,
        actor: str = "operator",
        with_history: bool = True,
    ) -> Belief:
        return self.update(
            belief_id, {"review_state": state}, actor=actor, event=state, with_history=with_history
        )

    def reinforce(
        self,
        belief_id: str,
        *,
        aliases: Sequence[str] = (),
        at: datetime | None = None,
        actor: str = "extractor",
        with_history: bool = True,
    ) -> Belief:
        """Count one more sighting and add new surface forms as aliases (at most 25 kept)."""
        with self.transaction():
            old = self._require(belief_id)
            if old.deleted_at is not None:
                raise InvalidBelief(f"{belief_id} is deleted; restore it before reinforcing it")
            when = as_utc(at) or utcnow()
            merged = union_names(old.aliases, tuple(aliases))
            added = [a for a in merged if a not in old.aliases]
            new = validated(
                {
                    **old.model_dump(),
                    "reinforcement_count": old.reinforcement_count + 1,
                    "last_reinforced_at": when,
                    "aliases": merged,
                    "updated_at": utcnow(),
                },
                belief_id,
            )
            row = self._write(new)
            detail = {"reinforcement_count": new.reinforcement_count, "aliases_added": added}
            self._event(belief_id, "reinforced", actor, detail)
        return self._returned(row, with_history)

    def soft_delete(
        self, belief_id: str, *, actor: str = "operator", with_history: bool = True
    ) -> Belief:
        """Hide the belief (kept, restorable). Deleting a deleted belief changes nothing."""
        with self.transaction():
            row = self._require(belief_id)
            if row.deleted_at is None:
                now = utcnow()
                row = self._write(row.model_copy(update={"deleted_at": now, "updated_at": now}))
                self._event(belief_id, "deleted", actor, {"hard": False})
        return self._returned(row, with_history)

    def restore(
        self, belief_id: str, *, actor: str = "operator", with_history: bool = True
    ) -> Belief:
        """Undo a soft delete.

        Raises:
            CanonicalNameClash: a live belief took the name while this one was deleted.
        """
        with self.transaction():
            row = self._require(belief_id)
            if row.deleted_at is not None:
                new = row.model_copy(update={"deleted_at": None, "updated_at": utcnow()})
                self._check_name(new)
                row = self._write(new)
                self._event(belief_id, "restored", actor, {})
        return self._returned(row, with_history)

    def _note_always_on(self, old: Belief | None, new: Belief, actor: str) -> None:
        """A write by anyone but the operator (an agent, the extractor, compaction) that makes
        a belief always-on is an event of its own, which the audit page lists: such a belief
        reaches every turn in its scope. The operator's own writes are theirs to make."""
        if actor == "operator":
            return
        if new.always_on and not (old is not None and old.always_on):
            self._event(new.id, ALWAYS_ON, actor, always_on_detail(new))

    def _check_name(self, candidate: Belief, *, exclude: Sequence[str] = ()) -> None:
        if not candidate.is_live:
            return
        others = self._named(candidate.user_id, candidate.canonical_name)
        holder = clash_with(candidate, [o for o in others if o.id not in exclude])
        if holder is not None:
            shared = sorted(set(candidate.scope) & set(holder.scope))
            raise CanonicalNameClash(
                f"user {candidate.user_id!r} already has a live belief named "
                f"{candidate.canonical_name!r} in {', '.join(shared)}: {holder.id}; "
                f"update or supersede {holder.id} instead"
            )


def validated(data: dict[str, Any], belief_id: str) -> Belief:
    try:
        return Belief.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        reasons = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {reason(err)}" for err in errors
        )
        first = errors[0]["loc"][0] if errors and errors[0]["loc"] else None
        raise InvalidBelief(
            f"{belief_id}: {reasons}", field=str(first) if first else None
        ) from None


def changed_fields(old: Belief, new: Belief) -> dict[str, dict[str, Any]]:
    before = old.model_dump(mode="json", exclude={"change_log", "updated_at"})
    after = new.model_dump(mode="json", exclude={"change_log", "updated_at"})
    return {k: {"old": before[k], "new": after[k]} for k in before if before[k] != after[k]}
