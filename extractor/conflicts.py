"""Conflicts: contradictions the extractor refused to absorb silently, until someone decides."""

from __future__ import annotations

import builtins
import json
import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

from beliefs.models import Belief, new_belief_id, utcnow
from beliefs.rows import as_utc
from beliefs.store import BeliefStore
from extractor.errors import ConflictNotFound, ConflictStateError, InvalidResolution
from extractor.merge import inherit, same_content

Resolution = Literal["keep_existing", "take_new", "keep_both"]
RESOLUTIONS: tuple[str, ...] = get_args(Resolution)
ConflictStatus = Literal["open", "resolved"]
CONFLICT_STATUSES: tuple[str, ...] = get_args(ConflictStatus)

_COLUMNS = (
    "id, user_id, existing_id, new_id, proposed, reason, status, resolution, job_id, "
    "created_at, resolved_at"
)


class Conflict(BaseModel):
    """Two beliefs (or a belief and a proposal) that cannot both be true."""

    model_config = ConfigDict(extra="forbid")

    id: str
    user_id: str
    existing_id: str
    new_id: str | None
    proposed: Belief | None
    reason: str
    status: ConflictStatus
    resolution: Resolution | None
    job_id: str | None
    created_at: datetime
    resolved_at: datetime | None


class ConflictBook:
    """Record, list and resolve conflicts; resolution writes beliefs in the same transaction."""

    def __init__(self, store: BeliefStore) -> None:
        self.store = store

    def record(
        self,
        *,
        user_id: str,
        existing_id: str,
        reason: str,
        proposed: Belief | None = None,
        new_id: str | None = None,
        job_id: str | None = None,
    ) -> str | None:
        """Open a conflict; None if the same one is already open (a repeated claim)."""
        for open_one in self.list(status="open", existing_id=existing_id):
            if new_id is not None and open_one.new_id == new_id:
                return None
            if (
                proposed is not None
                and open_one.proposed is not None
                and same_content(open_one.proposed.content, proposed.content)
            ):
                return None
        conflict_id = f"c-{secrets.token_hex(8)}"
        self.store.execute(
            "INSERT INTO conflicts (id, user_id, existing_id, new_id, proposed, reason, status, "
            "job_id, created_at) VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?)",
            [
                conflict_id,
                user_id,
                existing_id,
                new_id,
                proposed.model_dump_json() if proposed is not None else None,
                reason,
                job_id,
                utcnow(),
            ],
        )
        return conflict_id

    def get(self, conflict_id: str) -> Conflict:
        row = self.store.execute(
            f"SELECT {_COLUMNS} FROM conflicts WHERE id = ?", [conflict_id]
        ).fetchone()
        if row is None:
            raise ConflictNotFound(f"no conflict {conflict_id!r}; list them at GET /api/conflicts")
        return _conflict(row)

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
        clauses, params = [], []
        for column, value in (
            ("status", status),
            ("user_id", user_id),
            ("existing_id", existing_id),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self.store.execute(
            f"SELECT {_COLUMNS} FROM conflicts{where} ORDER BY created_at DESC, id DESC "
            f"LIMIT {max(0, int(limit))}",
            params,
        ).fetchall()
        return [_conflict(r) for r in rows]

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
            self.store.execute(
                "UPDATE conflicts SET status = 'resolved', resolution = ?, new_id = ?, "
                "resolved_at = ? WHERE id = ?",
                [resolution, new_id, utcnow(), conflict_id],
            )
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


def _conflict(row: Sequence[Any]) -> Conflict:
    return Conflict(
        id=row[0],
        user_id=row[1],
        existing_id=row[2],
        new_id=row[3],
        proposed=Belief.model_validate(json.loads(row[4])) if row[4] else None,
        reason=row[5],
        status=row[6],
        resolution=row[7],
        job_id=row[8],
        created_at=as_utc(row[9]),
        resolved_at=as_utc(row[10]),
    )
