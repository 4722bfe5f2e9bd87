"""The DuckDB belief store: rows are history, supersession is a link, every change is an event."""

from __future__ import annotations

import builtins
import copy
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from beliefs.model.chains import chain_of, check_supersede
from beliefs.model.errors import BeliefNotFound, CanonicalNameClash, InvalidBelief, reason
from beliefs.model.models import (
    Belief,
    HistoryEvent,
    ReviewState,
    as_utc,
    normalize_canonical_name,
    union_names,
    utcnow,
)
from beliefs.model.timeline import beliefs_as_of
from beliefs.store.database import BeliefDatabase
from beliefs.store.importer import IMPORT_BATCH, import_into
from beliefs.store.invariants import clash_with, verify_beliefs
from beliefs.store.rows import LIVE_SQL, SELECT_EVENTS, event_from_row

# Fields only the dedicated operations may change, so chains and deletions stay consistent.
PROTECTED_FIELDS = {
    "id": "ids never change",
    "change_log": "history is append-only",
    "superseded_by": "use supersede",
    "deleted_at": "use soft_delete / restore",
}


class BeliefStore(BeliefDatabase):
    """Belief operations; every change appends a history event in the same transaction."""

    # -- reads ---------------------------------------------------------------------------------

    def get(self, belief_id: str, *, with_history: bool = True) -> Belief:
        """The belief with its change_log (soft-deleted rows included); without the log (and
        without a query) if not `with_history`.

        Raises:
            BeliefNotFound: no row with that id.
        """
        return self._returned(self._require(belief_id), with_history)

    def find_live(
        self, user_id: str, canonical_name: str, scope: Sequence[str] | None = None
    ) -> Belief | None:
        try:
            name = normalize_canonical_name(canonical_name)
        except ValueError:
            return None
        sql = f"WHERE user_id = ? AND canonical_name = ? AND {LIVE_SQL}"
        params: list[Any] = [user_id, name]
        if scope:
            sql += " AND list_has_any(scope, ?)"
            params.append([s.strip().lower() for s in scope])
        found = self._select(sql + " ORDER BY created_at, id LIMIT 1", params)
        return found[0] if found else None

    def list(
        self,
        *,
        user_id: str | None = None,
        scope: str | None = None,
        agent_id: str | None = None,
        type: str | None = None,
        status: str | None = None,
        pinned: bool | None = None,
        review_state: str | None = None,
        include_superseded: bool = False,
        include_deleted: bool = False,
        limit: int | None = None,
        offset: int = 0,
        with_history: bool = False,
    ) -> builtins.list[Belief]:
        """Beliefs matching every given filter, oldest first; change_log only if `with_history`."""
        clauses: builtins.list[str] = []
        params: builtins.list[Any] = []
        for column, value in (
            ("user_id", user_id),
            ("agent_id", agent_id),
            ("type", type),
            ("epistemic_status", status),
            ("pinned", pinned),
            ("review_state", review_state),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if scope is not None:
            clauses.append("list_contains(scope, ?)")
            params.append(scope.strip().lower())
        if not include_superseded:
            clauses.append("superseded_by IS NULL AND epistemic_status <> 'superseded'")
        if not include_deleted:
            clauses.append("deleted_at IS NULL")
        sql = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        sql += " ORDER BY created_at, id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        if offset:
            sql += f" OFFSET {int(offset)}"
        beliefs = self._select(sql, params)
        if with_history and beliefs:
            logs = self._events([b.id for b in beliefs])
            beliefs = [b.model_copy(update={"change_log": logs.get(b.id, [])}) for b in beliefs]
        return beliefs

    def history(self, belief_id: str) -> builtins.list[HistoryEvent]:
        """Every event of the belief, oldest first; kept after a hard delete."""
        events = self._events([belief_id]).get(belief_id, [])
        if not events and not self._exists(belief_id):
            raise BeliefNotFound(
                f"no belief with id {belief_id!r}; `tenure beliefs list` shows ids"
            )
        return events

    def chain(self, belief_id: str) -> builtins.list[Belief]:
        """The whole supersession chain containing the belief, oldest -> newest."""
        belief = self._require(belief_id)
        return chain_of(self._select("WHERE user_id = ?", [belief.user_id]), belief_id)

    def as_of(self, user_id: str, at: datetime) -> builtins.list[Belief]:
        """The user's beliefs that were live at `at` (naive times are taken as UTC)."""
        at = as_utc(at) or at
        beliefs = self._select("WHERE user_id = ? ORDER BY created_at, id", [user_id])
        rows = self.conn.execute(
            SELECT_EVENTS + " WHERE event IN ('deleted', 'restored') AND belief_id IN "
            "(SELECT id FROM beliefs WHERE user_id = ?) ORDER BY seq",
            [user_id],
        ).fetchall()
        events: dict[str, builtins.list[HistoryEvent]] = {}
        for row in rows:
            belief_id, event = event_from_row(row)
            events.setdefault(belief_id, []).append(event)
        return beliefs_as_of(beliefs, at, events)

    def verify(self) -> builtins.list[str]:
        """Broken invariants across the whole store; empty means clean."""
        return verify_beliefs(self._select(""))

    # -- writes --------------------------------------------------------------------------------

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
        with self.transaction():
            old = self._require(belief_id)
            data = {**old.model_dump(), **changes}
            if "updated_at" not in changes:
                data["updated_at"] = utcnow()
            new = _validated(data, belief_id)
            diff = _diff(old, new)
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
        return self._returned(row, with_history)

    def pin(
        self, belief_id: str, pinned: bool, *, actor: str = "operator", with_history: bool = True
    ) -> Belief:
        event = "pinned" if pinned else "unpinned"
        return self.update(
            belief_id, {"pinned": pinned}, actor=actor, event=event, with_history=with_history
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
            new = _validated(
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

    def supersede(
        self,
        old_id: str,
        replacement: Belief,
        *,
        reason: str | None = None,
        actor: str = "operator",
        with_history: bool = True,
    ) -> Belief:
        """Insert `replacement`, then stamp the old row as superseded by it; one transaction.

        Raises:
            ChainError: the old belief is already superseded or deleted, or a cycle would form.
            CanonicalNameClash: another live belief (not the old one) has the replacement's name.
        """
        replacement = self._with_default_class(replacement)
        with self.transaction():
            old = self._require(old_id)
            check_supersede(old, replacement, self._links(old.user_id))
            if self._exists(replacement.id):
                raise InvalidBelief(f"belief id {replacement.id} already exists; use a new id")
            self._check_name(replacement, exclude=(old_id,))
            now = utcnow()
            row = self._insert(replacement)
            detail: dict[str, Any] = {"belief_id": old_id, "reason": reason}
            self._event(replacement.id, "supersedes", actor, detail)
            stamped = _validated(
                {
                    **old.model_dump(),
                    "superseded_by": replacement.id,
                    "epistemic_status": "superseded",
                    "invalidated_at": now,
                    "invalidation_reason": reason,
                    "updated_at": now,
                },
                old_id,
            )
            self._write(stamped)
            detail = {"belief_id": replacement.id, "reason": reason}
            self._event(old_id, "superseded_by", actor, detail)
        return self._returned(row, with_history)

    def merge(
        self,
        source_ids: Sequence[str],
        survivor: Belief,
        *,
        reason: str | None = None,
        actor: str = "operator",
        with_history: bool = True,
    ) -> Belief:
        """Insert `survivor`, then stamp every source as superseded by it; one transaction.

        Like `supersede` with several old rows: each source gets a link to the survivor (a
        chain that converges on one head), the survivor a `supersedes` event per source and
        one `merged_from` event listing them.

        Raises:
            InvalidBelief: fewer than two distinct sources, or the survivor's id exists.
            ChainError: a source is already superseded or deleted.
            CanonicalNameClash: a live belief other than the sources has the survivor's name.
        """
        ids = list(dict.fromkeys(source_ids))
        if len(ids) < 2:
            raise InvalidBelief(f"a merge needs at least two distinct beliefs, got {ids}")
        survivor = self._with_default_class(survivor)
        with self.transaction():
            olds = [self._require(i) for i in ids]
            links = self._links(olds[0].user_id)
            for old in olds:
                check_supersede(old, survivor, links)
            self._check_name(survivor, exclude=ids)
            now = utcnow()
            row = self._insert(survivor)
            for old in olds:
                self._event(
                    survivor.id, "supersedes", actor, {"belief_id": old.id, "reason": reason}
                )
                stamped = _validated(
                    {
                        **old.model_dump(),
                        "superseded_by": survivor.id,
                        "epistemic_status": "superseded",
                        "invalidated_at": now,
                        "invalidation_reason": reason,
                        "updated_at": now,
                    },
                    old.id,
                )
                self._write(stamped)
                detail = {"belief_id": survivor.id, "reason": reason}
                self._event(old.id, "superseded_by", actor, detail)
            self._event(survivor.id, "merged_from", actor, {"belief_ids": ids, "reason": reason})
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

    def hard_delete(self, belief_id: str, *, actor: str = "operator") -> None:
        """Remove the row for good; its history stays. Predecessors are relinked past it."""
        with self.transaction():
            old = self._require(belief_id)
            now = utcnow()
            for pred in self._select("WHERE superseded_by = ?", [belief_id]):
                relinked = pred.model_copy(
                    update={"superseded_by": old.superseded_by, "updated_at": now}
                )
                self._write(relinked)
                change = {"superseded_by": {"old": belief_id, "new": old.superseded_by}}
                detail = {"changes": change, "reason": f"{belief_id} was hard-deleted"}
                self._event(pred.id, "updated", actor, detail)
            self.flush()
            self.conn.execute("DELETE FROM beliefs WHERE id = ?", [belief_id])
            self._event(belief_id, "deleted", actor, {"hard": True})
            self._staged[belief_id] = None

    def import_beliefs(self, beliefs: Iterable[Belief], *, batch: int = IMPORT_BATCH) -> int:
        """Add beliefs as they are (ids, timestamps, links, change_log); all or nothing, read
        and written a batch at a time (`beliefs.store.importer`).

        Raises:
            ImportRejected: any entry would break an invariant; the message lists the entries.
        """
        return import_into(self, beliefs, batch)

    def _links(self, user_id: str) -> Mapping[str, str | None]:
        """The user's supersession links (id -> superseded_by), looked up as needed."""
        return _UserLinks(self, user_id)

    def _returned(self, row: Belief, with_history: bool) -> Belief:
        """A copy of a held row for the caller (never the index's object), with its history."""
        return row.model_copy(
            update={
                "aliases": list(row.aliases),
                "rejected_alternatives": list(row.rejected_alternatives),
                "scope": list(row.scope),
                "participants": list(row.participants),
                "provenance": copy.deepcopy(row.provenance),
                "change_log": self.history(row.id) if with_history else [],
            }
        )

    def _with_default_class(self, belief: Belief) -> Belief:
        """A new belief without a memory class takes its scope's rule default, if any."""
        if belief.memory_class is not None:
            return belief
        default = self.rules.memory_class(belief.scope, belief.user_id)
        return belief if default is None else belief.model_copy(update={"memory_class": default})

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


class _UserLinks(Mapping[str, "str | None"]):
    """One user's `id -> superseded_by`, read from the store's view of its rows on demand.

    Checking a supersession follows a chain or two, so reading every row of the user (as a
    query would) is wasted work.
    """

    def __init__(self, store: BeliefStore, user_id: str) -> None:
        self.store = store
        self.user_id = user_id

    def __getitem__(self, belief_id: str) -> str | None:
        belief = self.store._current(belief_id)
        if belief is None or belief.user_id != self.user_id:
            raise KeyError(belief_id)
        return belief.superseded_by

    def __iter__(self) -> Iterator[str]:
        return iter([b.id for b in self._rows()])

    def __len__(self) -> int:
        return len(self._rows())

    def _rows(self) -> builtins.list[Belief]:
        return self.store._select("WHERE user_id = ?", [self.user_id])


def _validated(data: dict[str, Any], belief_id: str) -> Belief:
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


def _diff(old: Belief, new: Belief) -> dict[str, dict[str, Any]]:
    before = old.model_dump(mode="json", exclude={"change_log", "updated_at"})
    after = new.model_dump(mode="json", exclude={"change_log", "updated_at"})
    return {k: {"old": before[k], "new": after[k]} for k in before if before[k] != after[k]}
