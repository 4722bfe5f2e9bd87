"""The JSON API under `/api/` (injections, the catch-all) and `/healthz`.

Every store call goes through the store thread; errors are JSON naming the bad value.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Match, Route

from proxy.api.endpoint import endpoint
from proxy.api.query_params import Query, query_flag, query_int
from proxy.errors import ProxyError
from proxy.gateway.injections import as_injected, query_injections
from proxy.runtime import Runtime, runtime_of


async def list_injections(rt: Runtime, params: Query) -> list[dict[str, Any]]:
    """Filters: request_id, user, belief_id, limit (newest first). `as_injected=true` adds
    each belief's name and text as the request received them."""
    records = await rt.thread.run(
        query_injections,
        rt.store,
        request_id=params.get("request_id"),
        user_id=params.get("user"),
        belief_id=params.get("belief_id"),
        limit=query_int(params, "limit", 50, low=1) or 50,
    )
    out = [r.as_json() for r in records]
    if query_flag(params, "as_injected"):
        views = await rt.thread.run(as_injected, rt.store, records)
        for record in out:
            record["as_injected"] = views.get(record["request_id"], {})
    return out


async def replica_health(rt: Runtime) -> dict[str, Any]:
    """Which backend, which replica, how far behind the others' writes its memory is, and
    which replica holds each running job until when (PostgreSQL only)."""
    feed = rt.store.feed
    out: dict[str, Any] = {
        "backend": rt.settings.backend,
        "id": feed.origin if feed is not None else None,
        "change_feed": None,
        "job_leases": None,
    }
    if feed is not None:
        try:
            out["job_leases"] = await asyncio.wait_for(rt.thread.run(rt.jobs.leases), 2)
        except Exception as exc:
            out["job_leases"] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
        try:
            status = await asyncio.wait_for(rt.thread.run(feed.status, rt.store), 2)
        except Exception as exc:
            status = {"error": f"{type(exc).__name__}: {exc}"[:200]}
        listener = rt.follower.listener.connected if rt.follower is not None else False
        out["change_feed"] = {**status, "listening": listener}
    return out


def job_backlog(rt: Runtime, stored: tuple[int, float] | None) -> tuple[dict[str, Any], str]:
    """The extraction backlog, the jobs still in memory (not in the store yet) counted in, and
    why it degrades the server ("" when it does not): more pending jobs than
    TENURE_EXTRACT_BACKLOG_DEGRADED, or an oldest one older than ..._DEGRADED_AGE_S."""
    waiting, waiting_age = rt.writer.jobs_waiting()
    in_store, store_age = stored if stored is not None else (0, 0.0)
    pending, age = in_store + waiting, max(store_age, waiting_age)
    settings = rt.settings
    jobs = {
        "pending": pending,
        "in_store": stored[0] if stored is not None else None,
        "in_memory": waiting,
        "oldest_pending_age_s": round(age, 3),
        "degraded_at": settings.extract_backlog_degraded,
        "degraded_age_s": settings.extract_backlog_degraded_age_s,
        "backlog_max": settings.extract_backlog_max,
        "shed": rt.jobs.shed,
    }
    too_many = 0 < settings.extract_backlog_degraded <= pending
    too_old = 0 < settings.extract_backlog_degraded_age_s <= age
    if not (too_many or too_old):
        return jobs, ""
    return jobs, (
        f"the extraction backlog is behind: {pending:,} job(s) pending ({waiting:,} of them in "
        f"memory, not in the store yet), the oldest {age:,.0f} s old; past "
        f"TENURE_EXTRACT_BACKLOG_DEGRADED ({settings.extract_backlog_degraded:,}) or "
        f"TENURE_EXTRACT_BACKLOG_DEGRADED_AGE_S ({settings.extract_backlog_degraded_age_s:g}); "
        "add extraction workers (TENURE_EXTRACT_WORKERS) or check the extraction model"
    )


async def health(rt: Runtime) -> dict[str, Any]:
    """ "ok"; "busy" when the store thread is behind on queued writes; "degraded" when the
    store fails or refuses writes or the extraction backlog is behind, with the reasons."""
    status, store_ok = "ok", True
    reasons: list[str] = []
    backlog: tuple[int, float] | None = None
    try:
        await asyncio.wait_for(rt.thread.run(lambda: rt.store.execute("SELECT 1").fetchone()), 2)
        backlog = await asyncio.wait_for(rt.thread.run(rt.jobs.backlog), 2)
    except TimeoutError:
        status = "busy"
    except Exception as exc:
        status, store_ok = "degraded", False
        reasons.append(f"the store does not answer: {type(exc).__name__}: {exc}"[:300])
    if rt.store.index.failed is not None:
        status, store_ok = "degraded", False
        reasons.append(
            f"the beliefs could not be loaded ({rt.store.index.failed}); memory is off until "
            "the server is restarted with a readable database"
        )
    jobs, late = job_backlog(rt, backlog)
    if late:
        status = "degraded"
        reasons.append(late)
    writes = rt.writer.health()
    if not writes.ok:
        status, store_ok = "degraded", False
        fix = (
            "check that the PostgreSQL server TENURE_DATABASE_URL names is up and reachable"
            if rt.store.dialect == "postgresql"
            else "free disk space or fix the data directory's permissions"
        )
        reasons.append(
            f"the store refuses writes ({writes.reason}); {writes.kept} write(s) kept in memory "
            f"and tried again until it takes them; {fix}"
        )
    body: dict[str, Any] = {
        "status": status,
        "reasons": reasons,
        "loading": not rt.store.index.ready.is_set(),
        "store": {
            "ok": store_ok,
            "beliefs_in_memory": len(rt.store.index),
            "loading": not rt.store.index.ready.is_set(),
            "load_failed": rt.store.index.failed,
            **_bound(rt),
        },
        "counters": rt.counters.as_dict(),
        "pending_writes": rt.writer.pending,
        "writes": {
            "ok": writes.ok,
            "reason": writes.reason,
            "kept": writes.kept,
            "lost": writes.lost,
            "failing_since": writes.failing_since,
        },
        "jobs": jobs,
    }
    try:
        breaker = rt.breaker_state()
    except Exception:
        breaker = {"error": "breaker state unavailable"}
    if breaker is not None:
        body["extractor"] = breaker
        if breaker.get("config_fault"):  # the proxy still answers: 200, yet memory is not forming
            body["status"] = "degraded"
            reasons.append(f"extraction is misconfigured: {breaker['config_fault']}")
    body["compaction"] = rt.scheduler.state()
    body["replica"] = await replica_health(rt)
    return body


async def healthz(request: Request) -> Response:
    """200 "ok"; 200 "busy" when the store thread is behind on queued writes; 503 "degraded"
    when the store fails or refuses writes, with the reasons. A backlog that is behind is
    "degraded" with 200: the replica still serves, and every replica shares the backlog."""
    body = await health(runtime_of(request))
    return JSONResponse(body, status_code=200 if body["store"]["ok"] else 503)


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


def api_routes() -> list[BaseRoute]:
    return [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/api/injections", endpoint(list_injections, query=True), methods=["GET"]),
        # Every method: an /api/ call never goes upstream.
        Route(
            "/api/{rest:path}",
            not_found,
            methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
        ),
    ]


def _bound(rt: Runtime) -> dict[str, Any]:
    """A bounded index's figures (nothing when it holds every belief)."""
    index = rt.store.index
    if not index.bounded:
        return {}
    return {
        "index_bound": index.bound,
        "users_in_memory": index.users_held,
        "user_loads": index.loads,
        "user_evictions": index.evictions,
    }
