"""What one run reads about a user, in one go on the store thread."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from beliefs.model.models import Belief, as_utc
from beliefs.store.belief_store import BeliefStore
from beliefs.store.conflicts import list_conflicts
from beliefs.store.tallies import user_ids
from compaction.clusters import examinable, scope_key
from compaction.turns import RecentTurn, recent_turns


@dataclass(frozen=True)
class ScopeState:
    fingerprint: str
    examined_at: datetime


@dataclass(frozen=True)
class Snapshot:
    user_id: str
    live: list[Belief]  # with change_log, so operator edits can be told apart
    deleted: list[Belief]
    turns: list[RecentTurn]
    scope_states: dict[str, ScopeState]
    conflict_pairs: frozenset[frozenset[str]]


def users(store: BeliefStore, only: str | None) -> list[str]:
    if only is not None:
        return [only]
    return user_ids(store, include_deleted=True)


def load(store: BeliefStore, user_id: str, *, turns_since: datetime) -> Snapshot:
    live = store.list(user_id=user_id, with_history=True)
    deleted = [
        b
        for b in store.list(user_id=user_id, include_superseded=True, include_deleted=True)
        if b.deleted_at is not None
    ]
    states = {
        row[0]: ScopeState(row[1], as_utc(row[2]))
        for row in store.execute(
            "SELECT scope_key, fingerprint, examined_at FROM compaction_scopes WHERE user_id = ?",
            [user_id],
        ).fetchall()
    }
    pairs = frozenset(
        frozenset((c.existing_id, c.new_id))
        for c in list_conflicts(store, user_id=user_id, limit=10_000)
        if c.new_id is not None
    )
    return Snapshot(
        user_id=user_id,
        live=live,
        deleted=deleted,
        turns=recent_turns(store, user_id, turns_since),
        scope_states=states,
        conflict_pairs=pairs,
    )


def fingerprint(beliefs: Iterable[Belief], latest_turn: datetime | None) -> str:
    """Changes when a belief of the scope changes or the user says something new."""
    parts = sorted(f"{b.id}@{b.updated_at.isoformat()}" for b in beliefs)
    parts.append(f"turn@{latest_turn.isoformat() if latest_turn else '-'}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:32]


def current_fingerprint(
    store: BeliefStore, user_id: str, key: str, latest_turn: datetime | None, now: datetime
) -> str:
    beliefs = [b for b in store.list(user_id=user_id) if examinable(b, now) and scope_key(b) == key]
    return fingerprint(beliefs, latest_turn)


def save_state(store: BeliefStore, user_id: str, key: str, fp: str, at: datetime) -> None:
    store.execute(
        "INSERT OR REPLACE INTO compaction_scopes (user_id, scope_key, fingerprint, examined_at) "
        "VALUES (?, ?, ?, ?)",
        [user_id, key, fp, at],
    )
