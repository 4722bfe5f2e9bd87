"""The turns queued for a user, newest first, read from the job table: what compaction reads of
the extractor's jobs (where new names show up)."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from beliefs.model.models import as_utc
from beliefs.store.belief_store import BeliefStore
from extractor.turn import Turn

log = logging.getLogger("tenure.extractor")


def recent_turns(
    store: BeliefStore, user_id: str, since: datetime | None, limit: int
) -> list[tuple[Turn, datetime]]:
    """The user's queued turns since `since` (all when None), newest first, each with the time
    it was queued; none before the job table exists (a store no gateway has written to)."""
    if not store.has_table("jobs"):
        return []
    sql = "SELECT turn, created_at FROM jobs WHERE user_id = ?"
    params: list[Any] = [user_id]
    if since is not None:
        sql += " AND created_at > ?"
        params.append(since)
    sql += " ORDER BY created_at DESC LIMIT ?"
    params.append(int(limit))
    out: list[tuple[Turn, datetime]] = []
    for raw, created in store.execute(sql, params).fetchall():
        try:
            turn = Turn.model_validate_json(raw)
        except ValueError:
            log.warning("job turn of user %s does not parse; left out of recent turns", user_id)
            continue
        out.append((turn, as_utc(created)))
    return out
