"""The JSON API under `/api/` (injections, the catch-all) and `/healthz` (`proxy.api.health`).

Every store call goes through the store thread; errors are JSON naming the bad value.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route

from beliefs.store.async_store import AsyncStore
from proxy.api.endpoint import endpoint
from proxy.api.health import Health, health_routes
from proxy.api.query_params import Query, query_flag, query_int
from proxy.errors import ProxyError
from proxy.gateway.injections import as_injected, query_injections


async def list_injections(store: AsyncStore, params: Query) -> list[dict[str, Any]]:
    """Filters: request_id, user, belief_id, limit (newest first). `as_injected=true` adds
    each belief's name and text as the request received them."""
    records = await store.apply(
        query_injections,
        request_id=params.get("request_id"),
        user_id=params.get("user"),
        belief_id=params.get("belief_id"),
        limit=query_int(params, "limit", 50, low=1) or 50,
    )
    out = [r.as_json() for r in records]
    if query_flag(params, "as_injected"):
        views = await store.apply(as_injected, records)
        for record in out:
            record["as_injected"] = views.get(record["request_id"], {})
    return out


async def not_found(request: Request) -> Response:
    """Any method on a path no API route serves; 405 naming the methods where the path exists."""
    allowed = sorted(
        {
            method
            for route in request.app.router.routes
            if isinstance(route, Route) and route.endpoint is not not_found
            if route.matches(request.scope)[0] is Match.PARTIAL
            for method in route.methods or ()
            if method != "HEAD"
        }
    )
    method, path = request.method, request.url.path
    if allowed:
        raise ProxyError(
            405,
            f"{method} is not allowed on {path}; use {' or '.join(allowed)}",
            code="method_not_allowed",
        )
    raise ProxyError(404, f"no API endpoint {method} {path}", type="not_found")


def api_routes(store: AsyncStore, health: Health) -> list[BaseRoute]:
    return [
        *health_routes(health),
        Route("/api/injections", endpoint(list_injections, store, query=True), methods=["GET"]),
        # Every method: an /api/ call never goes upstream.
        Route(
            "/api/{rest:path}",
            not_found,
            methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
        ),
    ]
