"""Injection records: which beliefs went into which request (table `injections`, migration 2)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from beliefs.model.errors import BeliefNotFound
from beliefs.model.models import Belief, storable
from beliefs.model.timeline import state_at
from beliefs.store.belief_store import BeliefStore
from extractor.redact import redact
from extractor.turn import PersonaRef

MAX_LIMIT = 1000
_COLUMNS = (
    "request_id, created_at, user_id, agent_id, scopes, model, endpoint, query, layers, "
    "belief_ids, persona, approx_tokens, persona_version, persona_carries"
)


@dataclass(frozen=True, slots=True)
class InjectionRecord:
    request_id: str
    created_at: datetime
    user_id: str
    agent_id: str | None
    scopes: tuple[str, ...]
    model: str | None
    endpoint: str
    query: str
    layers: dict[str, list[str]]
    persona: bool
    approx_tokens: int
    persona_ref: PersonaRef | None = None  # older rows listed its beliefs in `layers["persona"]`

    @property
    def belief_ids(self) -> list[str]:
        return [belief_id for ids in self.layers.values() for belief_id in ids]

    def row(self) -> list[Any]:
        return [
            self.request_id,
            self.created_at,
            storable(self.user_id),
            None if self.agent_id is None else storable(self.agent_id),
            list(self.scopes),
            None if self.model is None else storable(self.model),
            self.endpoint,
            storable(redact(self.query)),  # the turn's own words: secrets never stored
            json.dumps(self.layers),
            self.belief_ids,
            self.persona,
            self.approx_tokens,
            None if self.persona_ref is None else self.persona_ref.version,
            None if self.persona_ref is None else self.persona_ref.carries,
        ]

    def as_json(self) -> dict[str, Any]:
        return {
            "request_id": self.request_id,
            "created_at": self.created_at.isoformat(),
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "scopes": list(self.scopes),
            "model": self.model,
            "endpoint": self.endpoint,
            "query": self.query,
            "layers": self.layers,
            "belief_ids": self.belief_ids,
            "persona": self.persona,
            "persona_ref": None if self.persona_ref is None else self.persona_ref.model_dump(),
            "approx_tokens": self.approx_tokens,
        }


# One row as a struct, fields in `_COLUMNS` order.
_ROW = (
    "STRUCT(request_id VARCHAR, created_at TIMESTAMPTZ, user_id VARCHAR, agent_id VARCHAR, "
    "scopes VARCHAR[], model VARCHAR, endpoint VARCHAR, query VARCHAR, layers VARCHAR, "
    "belief_ids VARCHAR[], persona BOOLEAN, approx_tokens INTEGER, persona_version VARCHAR, "
    "persona_carries INTEGER)"
)
_INSERT = f"INSERT INTO injections ({_COLUMNS}) SELECT r.* FROM (SELECT unnest(?::{_ROW}[]) AS r)"
_FIELDS = tuple(name.strip() for name in _COLUMNS.split(","))
_INSERT_ONE = f"INSERT INTO injections ({_COLUMNS}) VALUES ({', '.join('?' * len(_FIELDS))})"


# Rows per statement: DuckDB's cost per row falls with the statement's size (about 60 µs a
# row at 64, 30 at 256, 26 at 1,024), while its parameter is read holding the interpreter's
# lock, which the event loop then waits for.
SAVE_CHUNK = 256


def save_records(store: BeliefStore, records: Sequence[InjectionRecord]) -> None:
    """The records in statements of up to SAVE_CHUNK rows; store thread. One record (a lone
    request's batch, the common case below full load) binds its values directly: DuckDB
    plans that in about half the time of the struct cast. Several go as one list-of-structs
    parameter."""
    if len(records) == 1:
        store.execute(_INSERT_ONE, records[0].row())
        return
    for start in range(0, len(records), SAVE_CHUNK):
        chunk = records[start : start + SAVE_CHUNK]
        store.execute(_INSERT, [[dict(zip(_FIELDS, r.row(), strict=True)) for r in chunk]])


def query_injections(
    store: BeliefStore,
    *,
    request_id: str | None = None,
    user_id: str | None = None,
    belief_id: str | None = None,
    limit: int = 50,
) -> list[InjectionRecord]:
    """Newest first; every filter given must match."""
    where: list[str] = []
    params: list[Any] = []
    if request_id is not None:
        where.append("request_id = ?")
        params.append(request_id)
    if user_id is not None:
        where.append("user_id = ?")
        params.append(user_id)
    if belief_id is not None:
        where.append("list_contains(belief_ids, ?)")
        params.append(belief_id)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    params.append(max(1, min(limit, MAX_LIMIT)))
    rows = store.execute(
        f"SELECT {_COLUMNS} FROM injections {clause} ORDER BY created_at DESC LIMIT ?", params
    ).fetchall()
    return [_record(row) for row in rows]


def _record(row: Sequence[Any]) -> InjectionRecord:
    layers = row[8]
    return InjectionRecord(
        request_id=row[0],
        created_at=row[1],
        user_id=row[2],
        agent_id=row[3],
        scopes=tuple(row[4]),
        model=row[5],
        endpoint=row[6],
        query=row[7],
        layers=json.loads(layers) if isinstance(layers, str) else dict(layers),
        persona=bool(row[10]),
        approx_tokens=int(row[11]),
        persona_ref=None if row[12] is None else PersonaRef(version=row[12], carries=row[13]),
    )


def as_injected(
    store: BeliefStore, records: Sequence[InjectionRecord]
) -> dict[str, dict[str, dict[str, Any]]]:
    """request id -> belief id -> the belief's name and text as that request received them.

    A belief edited since is rolled back through its history to the request's time, so an
    audit shows what the model read (`edited_since` says the text changed since); one no
    longer stored (hard-deleted) is `{"stored": false}`. Store thread.
    """
    ids = sorted({belief_id for record in records for belief_id in record.belief_ids})
    current: dict[str, Belief | None] = {}
    for belief_id in ids:
        try:
            current[belief_id] = store.get(belief_id, with_history=False)
        except BeliefNotFound:
            current[belief_id] = None
    logged: dict[str, Belief] = {}  # beliefs edited since, with their change log
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for record in records:
        views: dict[str, dict[str, Any]] = {}
        for belief_id in record.belief_ids:
            belief = current[belief_id]
            if belief is None:
                views[belief_id] = {"stored": False}
                continue
            edited = belief.updated_at > record.created_at
            if edited:
                if belief_id not in logged:
                    logged[belief_id] = store.get(belief_id)  # with its change log
                full = logged[belief_id]
                then = state_at(full, record.created_at, full.change_log)
            else:
                then = belief
            views[belief_id] = {
                "stored": True,
                "canonical_name": then.canonical_name,
                "content": then.content,
                "why_it_matters": then.why_it_matters,
                "edited_since": edited
                and (then.content, then.why_it_matters, then.canonical_name)
                != (belief.content, belief.why_it_matters, belief.canonical_name),
            }
        out[record.request_id] = views
    return out
