"""Always-on writes: a belief pinned or delivered `always` reaches every turn in its scope, so
each write that makes one is a history event of its own, and so is each that was held back
(written as retrieved) because such writes need the user's confirmation."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from beliefs.model.record import AnyBelief
from beliefs.store.database import BeliefDatabase
from beliefs.store.rows import event_from_row

ALWAYS_ON = "always_on"
ALWAYS_ON_REFUSED = "always_on_refused"
EVENTS = (ALWAYS_ON, ALWAYS_ON_REFUSED)
PREVIEW_CHARS = 200


def always_on_detail(belief: AnyBelief) -> dict[str, Any]:
    """What an always-on event keeps: how it is delivered, who wrote it, what it says."""
    return {
        "pinned": belief.pinned,
        "delivery": belief.delivery,
        "source_type": belief.source_type,
        "agent_id": belief.agent_id,
        "preview": belief.content[:PREVIEW_CHARS],
    }


@dataclass(frozen=True)
class AlwaysOnWrite:
    """One always-on event, with the belief it is about (its user and name, when still stored)."""

    belief_id: str
    at: datetime
    event: str
    actor: str | None
    detail: dict[str, Any]
    user_id: str | None
    canonical_name: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "belief_id": self.belief_id,
            "at": self.at.isoformat(),
            "event": self.event,
            "actor": self.actor,
            "detail": self.detail,
            "user_id": self.user_id,
            "canonical_name": self.canonical_name,
        }


def always_on_writes(
    db: BeliefDatabase,
    *,
    user_id: str | None = None,
    belief_id: str | None = None,
    limit: int = 100,
) -> list[AlwaysOnWrite]:
    """The always-on events, written and refused, newest first."""
    db.flush()
    sql = (
        'SELECT e.belief_id, e."at", e.event, e.actor, e.detail, b.user_id, b.canonical_name '
        "FROM belief_events e LEFT JOIN beliefs b ON b.id = e.belief_id "
        "WHERE e.event IN (?, ?)"
    )
    params: list[Any] = list(EVENTS)
    if user_id:
        sql += " AND b.user_id = ?"
        params.append(user_id)
    if belief_id:
        sql += " AND e.belief_id = ?"
        params.append(belief_id)
    sql += f" ORDER BY e.seq DESC LIMIT {int(limit)}"
    out = []
    for row in db.conn.execute(sql, params).fetchall():
        found, event = event_from_row(row[:5])
        out.append(
            AlwaysOnWrite(found, event.at, event.event, event.actor, event.detail, row[5], row[6])
        )
    return out
