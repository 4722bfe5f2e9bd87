"""The conflicts table: two beliefs (or a belief and a proposal) that cannot both be true.

Both the extractor and compaction open conflicts, and neither imports the other, so the table's
reads and writes live here; deciding a conflict stays with the extractor's `ConflictBook`.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

from beliefs.context.contested import Contradiction
from beliefs.model.models import Belief, as_utc, same_content, utcnow
from beliefs.store.belief_store import BeliefStore

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


def record_conflict(
    store: BeliefStore,
    *,
    user_id: str,
    existing_id: str,
    reason: str,
    proposed: Belief | None = None,
    new_id: str | None = None,
    job_id: str | None = None,
) -> str | None:
    """Open a conflict; None if the same one is already open (either way round)."""
    for open_one in list_conflicts(store, status="open", existing_id=existing_id):
        if new_id is not None and open_one.new_id == new_id:
            return None
        if (
            proposed is not None
            and open_one.proposed is not None
            and same_content(open_one.proposed.content, proposed.content)
        ):
            return None
    if new_id is not None and any(
        c.new_id == existing_id for c in list_conflicts(store, status="open", existing_id=new_id)
    ):
        return None
    conflict_id = f"c-{secrets.token_hex(8)}"
    now = utcnow()
    store.execute(
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
            now,
        ],
    )
    claim = proposed.content if proposed is not None else _content(store, new_id)
    if claim:
        found = Contradiction(conflict_id, existing_id, claim, now)
        store.after_commit(lambda: store.contested.add(found))
    store.note_change("belief", existing_id)  # other replicas reload their open contradictions
    return conflict_id


def _content(store: BeliefStore, belief_id: str | None) -> str:
    belief = store.index.get(belief_id) if belief_id else None
    return belief.content if belief is not None else ""


def get_conflict(store: BeliefStore, conflict_id: str) -> Conflict | None:
    row = store.execute(f"SELECT {_COLUMNS} FROM conflicts WHERE id = ?", [conflict_id]).fetchone()
    return None if row is None else _conflict(row)


def list_conflicts(
    store: BeliefStore,
    *,
    status: str | None = None,
    user_id: str | None = None,
    existing_id: str | None = None,
    limit: int = 100,
) -> list[Conflict]:
    """Newest first; `status` must be one of CONFLICT_STATUSES (callers check user input)."""
    clauses, params = [], []
    for column, value in (("status", status), ("user_id", user_id), ("existing_id", existing_id)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = store.execute(
        f"SELECT {_COLUMNS} FROM conflicts{where} ORDER BY created_at DESC, id DESC "
        f"LIMIT {max(0, int(limit))}",
        params,
    ).fetchall()
    return [_conflict(r) for r in rows]


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


def mark_resolved(
    store: BeliefStore, conflict_id: str, resolution: str, *, new_id: str | None
) -> None:
    """Close a conflict with its resolution (inside the caller's transaction, which also
    writes the beliefs the resolution decided)."""
    store.execute(
        "UPDATE conflicts SET status = 'resolved', resolution = ?, new_id = ?, "
        "resolved_at = ? WHERE id = ?",
        [resolution, new_id, utcnow(), conflict_id],
    )
    store.after_commit(lambda: store.contested.discard(conflict_id))
    existing = store.execute("SELECT existing_id FROM conflicts WHERE id = ?", [conflict_id])
    for (existing_id,) in existing.fetchall():
        store.note_change("belief", existing_id)
