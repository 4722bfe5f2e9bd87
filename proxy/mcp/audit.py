"""The record of every memory-tool call (who, which tool, with what, what came of it) and its
JSON listing for the audit page: `GET /api/mcp/calls`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from starlette.routing import BaseRoute, Route

from beliefs.model.models import storable_value, utcnow
from beliefs.store.async_store import AsyncStore
from beliefs.store.belief_store import BeliefStore
from extractor.redact import redact_record
from proxy.api.endpoint import endpoint
from proxy.api.query_params import Query, query_int

_COLUMNS = (
    "id, created_at, user_id, agent_id, scopes, transport, client, tool, arguments, ok, "
    "outcome, belief_ids, result, duration_ms"
)
MAX_ARGUMENT_CHARS = 4000


@dataclass(frozen=True)
class ToolCall:
    id: str
    user_id: str
    agent_id: str | None
    scopes: tuple[str, ...]
    transport: str
    client: str | None
    tool: str
    arguments: dict[str, Any]
    ok: bool
    outcome: str
    belief_ids: tuple[str, ...] = ()
    result: dict[str, Any] = field(default_factory=dict)
    duration_ms: float = 0.0
    created_at: datetime = field(default_factory=utcnow)


def record_call(store: BeliefStore, call: ToolCall) -> None:
    """Store the call, its arguments and result redacted together (no secret is kept or
    shown on the audit page)."""
    clean = redact_record({"arguments": call.arguments, "result": call.result})
    arguments = json.dumps(storable_value(clean["arguments"]), default=str)
    if len(arguments) > MAX_ARGUMENT_CHARS:
        arguments = json.dumps({"clipped": arguments[:MAX_ARGUMENT_CHARS]})
    store.execute(
        f"INSERT INTO mcp_calls ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            call.id,
            call.created_at,
            call.user_id,
            call.agent_id,
            list(call.scopes),
            call.transport,
            call.client,
            call.tool,
            arguments,
            call.ok,
            call.outcome,
            list(call.belief_ids),
            json.dumps(storable_value(clean["result"]), default=str),
            call.duration_ms,
        ],
    )


def list_calls(
    store: BeliefStore,
    *,
    user_id: str | None = None,
    tool: str | None = None,
    belief_id: str | None = None,
    limit: int = 100,
) -> list[dict[str, Any]]:
    """Newest first."""
    clauses: list[str] = []
    params: list[Any] = []
    for column, value in (("user_id", user_id), ("tool", tool)):
        if value:
            clauses.append(f"{column} = ?")
            params.append(value)
    if belief_id:
        clauses.append("list_contains(belief_ids, ?)")
        params.append(belief_id)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = store.execute(
        f"SELECT {_COLUMNS} FROM mcp_calls {where} ORDER BY created_at DESC, id LIMIT {int(limit)}",
        params,
    ).fetchall()
    names = [c.strip() for c in _COLUMNS.split(",")]
    out = []
    for row in rows:
        item = dict(zip(names, row, strict=True))
        item["created_at"] = item["created_at"].isoformat()
        # Redacted again as shown: rows written before arguments were redacted on the way in
        # still hold what the caller typed.
        shown = redact_record(
            {"arguments": json.loads(item["arguments"]), "result": json.loads(item["result"])}
        )
        item["arguments"], item["result"] = shown["arguments"], shown["result"]
        out.append(item)
    return out


async def calls(store: AsyncStore, params: Query) -> list[dict[str, Any]]:
    """Memory-tool calls, newest first; filters: user, tool, belief_id, limit (1-500)."""
    limit = query_int(params, "limit", 100, low=1, high=500, empty_ok=False) or 100
    rows = await store.apply(
        list_calls,
        user_id=params.get("user") or None,
        tool=params.get("tool") or None,
        belief_id=params.get("belief_id") or None,
        limit=limit,
    )
    return rows


def audit_routes(store: AsyncStore) -> list[BaseRoute]:
    return [Route("/api/mcp/calls", endpoint(calls, store, query=True), methods=["GET"])]
