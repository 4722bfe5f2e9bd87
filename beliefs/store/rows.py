"""Mapping between `Belief`/`HistoryEvent` and DuckDB rows (lists as VARCHAR[], JSON as text)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from beliefs.model.models import Belief, HistoryEvent, as_utc
from beliefs.model.record import FIELDS, TIMES, BeliefRecord

BELIEF_COLUMNS: tuple[str, ...] = FIELDS  # a row's columns are the record's fields, in order
_JSON_COLUMNS = frozenset({"provenance"})
_LIST_COLUMNS = frozenset({"aliases", "rejected_alternatives", "scope", "participants"})
_TIME_COLUMNS = tuple(
    c
    for c in BELIEF_COLUMNS
    if c.endswith("_at") and c not in ("created_at", "updated_at")  # nullable ones
)

LIVE_SQL = "superseded_by IS NULL AND epistemic_status <> 'superseded' AND deleted_at IS NULL"
SELECT_BELIEFS = f"SELECT {', '.join(BELIEF_COLUMNS)} FROM beliefs"
UPDATE_BELIEF = (
    "UPDATE beliefs SET "
    + ", ".join(f"{c} = ?" for c in BELIEF_COLUMNS if c != "id")
    + " WHERE id = ?"
)
EVENT_COLUMNS: tuple[str, ...] = ("belief_id", "at", "event", "actor", "detail")
SELECT_EVENTS = 'SELECT belief_id, "at", event, actor, detail FROM belief_events'


def belief_params(belief: Belief) -> list[Any]:
    """Column values in `BELIEF_COLUMNS` order."""
    out: list[Any] = []
    for column in BELIEF_COLUMNS:
        value = getattr(belief, column)
        if column in _JSON_COLUMNS:
            value = json.dumps(value, sort_keys=True, default=str)
        elif column in _LIST_COLUMNS:
            value = list(value)
        out.append(value)
    return out


def stored(belief: Belief) -> Belief:
    """The belief exactly as reading its row back would return it, without the change_log.

    Times come back in UTC (naive ones are taken as UTC) and provenance as the JSON it was
    stored as, so the in-memory copy the store keeps equals a fresh read of the row.
    """
    update: dict[str, Any] = {
        "created_at": as_utc(belief.created_at),
        "updated_at": as_utc(belief.updated_at),
        "provenance": json.loads(json.dumps(belief.provenance, sort_keys=True, default=str)),
        "change_log": [],
    }
    for column in _TIME_COLUMNS:
        update[column] = as_utc(getattr(belief, column))
    for column in _LIST_COLUMNS:
        update[column] = list(getattr(belief, column))
    return belief.model_copy(update=update)


def update_params(belief: Belief) -> list[Any]:
    values = belief_params(belief)
    return [*values[1:], values[0]]


def belief_from_row(row: Sequence[Any], change_log: list[HistoryEvent] | None = None) -> Belief:
    data: dict[str, Any] = {}
    for column, value in zip(BELIEF_COLUMNS, row, strict=True):
        if column in _JSON_COLUMNS:
            value = json.loads(value) if value else {}
        elif isinstance(value, datetime):
            value = as_utc(value)
        data[column] = value
    data["change_log"] = change_log or []
    return Belief.model_validate(data)


# The times a record holds as objects (`expires_at`, `deleted_at`...): equal ones shared. Its
# creation, update and reinforcement it packs into one number (`record.TIMES`), from any zone.
_SHARED_TIME_COLUMNS = frozenset(c for c in BELIEF_COLUMNS if c.endswith("_at") and c not in TIMES)


def record_from_row(
    row: Sequence[Any], times: dict[datetime, datetime] | None = None
) -> BeliefRecord:
    """The record of a row this store wrote (so already valid): decoded without validation,
    and the equal times it holds as objects are one object: a row's, or all those of the rows
    given one `times` (rows written by one change share their times)."""
    values: list[Any] = []
    if times is None:
        times = {}
    for column, value in zip(BELIEF_COLUMNS, row, strict=True):
        if value is None:
            pass
        elif column in _SHARED_TIME_COLUMNS:
            utc = as_utc(value)
            value = times.setdefault(utc, utc)
        elif column in _JSON_COLUMNS:
            value = json.loads(value) if value != "{}" else None
        values.append(value)
    return BeliefRecord.from_values(values)


def event_params(belief_id: str, event: HistoryEvent) -> list[Any]:
    return [
        belief_id,
        event.at,
        event.event,
        event.actor,
        json.dumps(event.detail, sort_keys=True, default=str),
    ]


def event_from_row(row: Sequence[Any]) -> tuple[str, HistoryEvent]:
    belief_id, at, event, actor, detail = row
    return belief_id, HistoryEvent(
        at=as_utc(at), event=event, actor=actor, detail=json.loads(detail) if detail else {}
    )
