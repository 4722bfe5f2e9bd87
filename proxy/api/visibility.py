"""Who sees a belief and how often: sharing an agent's belief with every agent of its user
(the commons), and the always-on writes (pinned or delivered `always`) the audit page lists.

Both are the operator's: no client token may share a belief or read the always-on log.
"""

from __future__ import annotations

from typing import Any

from starlette.routing import BaseRoute, Route

from beliefs.store.always_on import always_on_writes
from beliefs.store.async_store import AsyncStore
from beliefs.store.belief_store import BeliefStore
from proxy.api.beliefs import ID, belief_json
from proxy.api.endpoint import endpoint
from proxy.api.query_params import Query, query_int

ALWAYS_ON_LIMIT = 100


async def share_belief(store: AsyncStore, belief_id: str) -> dict[str, Any]:
    """Share an agent's belief with every agent of its user; `agent_id` keeps its author.
    Nothing is shared unless shared here (or with `tenure beliefs share`)."""
    return belief_json(await store.apply(BeliefStore.share, belief_id, True))


async def unshare_belief(store: AsyncStore, belief_id: str) -> dict[str, Any]:
    """Take a shared belief back: only the agent that wrote it receives it again."""
    return belief_json(await store.apply(BeliefStore.share, belief_id, False))


async def always_on_events(store: AsyncStore, params: Query) -> list[dict[str, Any]]:
    """Writes that made a belief always-on (event `always_on`) and those held back for the
    user's confirmation (`always_on_refused`), newest first. Filters: user, belief_id, limit."""
    limit = query_int(params, "limit", ALWAYS_ON_LIMIT, low=1) or ALWAYS_ON_LIMIT
    found = await store.apply(
        always_on_writes,
        user_id=params.get("user") or None,
        belief_id=params.get("belief_id") or None,
        limit=limit,
    )
    return [w.as_json() for w in found]


def visibility_routes(store: AsyncStore) -> list[BaseRoute]:
    return [
        Route(
            "/api/beliefs/{belief_id}/share",
            endpoint(share_belief, store, path=ID),
            methods=["POST"],
        ),
        Route(
            "/api/beliefs/{belief_id}/unshare",
            endpoint(unshare_belief, store, path=ID),
            methods=["POST"],
        ),
        Route("/api/always-on", endpoint(always_on_events, store, query=True), methods=["GET"]),
    ]
