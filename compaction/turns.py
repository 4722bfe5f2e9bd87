"""Recent turns, read from the extraction job table when it exists: where new names show up."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from beliefs.render import strip_injected
from beliefs.rows import as_utc
from beliefs.store import BeliefStore

UNIVERSAL = "user:universal"
MAX_TURNS = 200


@dataclass(frozen=True)
class RecentTurn:
    """What the user said in one exchange (the proxy's injected memory already stripped)."""

    user_id: str
    scopes: tuple[str, ...]
    model: str
    user_message: str
    assistant_message: str
    created_at: datetime

    def applies_to(self, scopes: set[str]) -> bool:
        """A turn in `domain:code/python` speaks about beliefs of domain:code/python,
        domain:code and user:universal."""
        return any(
            mine == theirs or mine.startswith(theirs + "/")
            for mine in (*self.scopes, UNIVERSAL)
            for theirs in scopes
        )


def has_jobs(store: BeliefStore) -> bool:
    row = store.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'jobs'"
    ).fetchone()
    return bool(row and row[0])


def recent_turns(
    store: BeliefStore, user_id: str, since: datetime | None, limit: int = MAX_TURNS
) -> list[RecentTurn]:
    """The user's turns since `since` (all when None), newest first."""
    if not has_jobs(store):
        return []
    sql = "SELECT turn, created_at FROM jobs WHERE user_id = ?"
    params: list[Any] = [user_id]
    if since is not None:
        sql += " AND created_at > ?"
        params.append(since)
    sql += f" ORDER BY created_at DESC LIMIT {int(limit)}"
    out = []
    for raw, created in store.execute(sql, params).fetchall():
        turn = _turn(raw, user_id, as_utc(created))
        if turn is not None:
            out.append(turn)
    return out


def latest_model(store: BeliefStore, user_id: str) -> str | None:
    """The model of the user's most recent turn (what extraction would use by default)."""
    turns = recent_turns(store, user_id, None, limit=1)
    return turns[0].model if turns and turns[0].model else None


def _turn(raw: Any, user_id: str, created: datetime) -> RecentTurn | None:
    try:
        data = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    scopes = data.get("scopes") or []
    return RecentTurn(
        user_id=user_id,
        scopes=tuple(str(s).strip().lower() for s in scopes if isinstance(s, str)),
        model=str(data.get("model") or ""),
        user_message=strip_injected(str(data.get("user_message") or "")),
        assistant_message=strip_injected(str(data.get("assistant_message") or "")),
        created_at=created,
    )
