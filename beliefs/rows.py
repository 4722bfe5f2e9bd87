"""Mapping between `Belief`/`HistoryEvent` and DuckDB rows (lists as VARCHAR[], JSON as text)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, overload

from beliefs.frozen import FrozenDict, FrozenList
from beliefs.models import Belief, HistoryEvent

BELIEF_COLUMNS: tuple[str, ...] = tuple(f for f in Belief.model_fields if f != "change_log")
_JSON_COLUMNS = frozenset({"provenance"})
_LIST_COLUMNS = frozenset({"aliases", "rejected_alternatives", "scope", "participants"})
_TIME_COLUMNS = tuple(
    c
    for c in BELIEF_COLUMNS
    if c.endswith("_at") and c not in ("created_at", "updated_at")  # nullable ones
)

SELECT_BELIEFS = f"SELECT {', '.join(BELIEF_COLUMNS)} FROM beliefs"
UPDATE_BELIEF = (
    "UPDATE beliefs SET "
    + ", ".join(f"{c} = ?" for c in BELIEF_COLUMNS if c != "id")
    + " WHERE id = ?"
)
EVENT_COLUMNS: tuple[str, ...] = ("belief_id", "at", "event", "actor", "detail")
SELECT_EVENTS = 'SELECT belief_id, "at", event, actor, detail FROM belief_events'


@overload
def as_utc(value: datetime) -> datetime: ...
@overload
def as_utc(value: None) -> None: ...
def as_utc(value: datetime | None) -> datetime | None:
    """DuckDB hands back TIMESTAMPTZ in the session zone; the model speaks UTC."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


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


_TRUSTED_TIME_COLUMNS = frozenset(c for c in BELIEF_COLUMNS if c.endswith("_at"))
_INTERNED_COLUMNS = frozenset(
    {
        "user_id",
        "agent_id",
        "type",
        "subtype",
        "epistemic_status",
        "memory_class",
        "delivery",
        "review_state",
        "source_type",
    }
)


# Every decoded row sets every field, so one set serves them all: pydantic would otherwise keep
# a set of 32 names per belief, over 2 KB each, more than the rest of the belief.
_ALL_FIELDS = set(Belief.model_fields)
# Building the instance as `model_construct` does, minus its per-field alias and default
# lookups (a third of its cost): valid only while the model has none of those to honour.
assert not Belief.__pydantic_post_init__ and not Belief.__private_attributes__
assert all(f.alias is None and f.validation_alias is None for f in Belief.model_fields.values())
_EMPTY_LIST = FrozenList()
_EMPTY_DICT = FrozenDict()
_SHARED_LISTS: dict[tuple[str, ...], FrozenList] = {}  # few-valued lists (scopes), by value
_MAX_SHARED_LISTS = 10_000
_NAME_COLUMNS = frozenset({"aliases", "rejected_alternatives"})


def trusted_belief_from_row(row: Sequence[Any]) -> Belief:
    """`belief_from_row` for rows this store wrote (so already valid): no validation, and
    equal values share one object, which a large store's memory feels: the few-valued
    columns' strings, alias strings (the index's tokens are often the same text), empty lists
    and dicts and scope lists (as `FrozenList`/`FrozenDict`: they refuse change in place),
    and a row's equal times.
    """
    data: dict[str, Any] = {}
    times: dict[datetime, datetime] = {}
    for column, value in zip(BELIEF_COLUMNS, row, strict=True):
        if value is None:
            pass
        elif column in _TRUSTED_TIME_COLUMNS:
            utc = as_utc(value)
            value = times.setdefault(utc, utc)
        elif column in _INTERNED_COLUMNS:
            value = sys.intern(value)
        elif column in _JSON_COLUMNS:
            value = json.loads(value) if value and value != "{}" else _EMPTY_DICT
        elif not value and column in _LIST_COLUMNS:
            value = _EMPTY_LIST
        elif column == "scope":
            value = _shared_list(value)
        elif column in _NAME_COLUMNS:
            value = [sys.intern(name) for name in value]
        data[column] = value
    if data.get("provenance") is None:
        data["provenance"] = _EMPTY_DICT
    data["change_log"] = _EMPTY_LIST
    belief = Belief.__new__(Belief)
    object.__setattr__(belief, "__dict__", data)
    object.__setattr__(belief, "__pydantic_fields_set__", _ALL_FIELDS)
    object.__setattr__(belief, "__pydantic_extra__", None)
    object.__setattr__(belief, "__pydantic_private__", None)
    return belief


def _shared_list(values: list[str]) -> list[str]:
    key = tuple(values)
    found = _SHARED_LISTS.get(key)
    if found is None:
        if len(_SHARED_LISTS) >= _MAX_SHARED_LISTS:
            return [sys.intern(v) for v in values]
        found = _SHARED_LISTS[key] = FrozenList(sys.intern(v) for v in values)
    return found


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
