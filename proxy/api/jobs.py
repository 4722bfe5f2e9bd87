"""The extractor's API: `/api/jobs` (list, retry) and `/api/conflicts` (list, resolve)."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from extractor.conflicts import CONFLICT_STATUSES, RESOLUTIONS, Conflict, ConflictBook
from extractor.jobs import JOB_STATUSES, Job
from proxy.api.query_params import query_int
from proxy.errors import bad_field
from proxy.runtime import runtime_of


def _choice(request: Request, name: str, accepted: tuple[str, ...]) -> str | None:
    raw = request.query_params.get(name)
    if raw is not None and raw not in accepted:
        raise bad_field(name, f"{name}={raw!r} is not accepted; use one of {', '.join(accepted)}")
    return raw


def _limit(request: Request) -> int:
    return query_int(request, "limit", 100, low=1, high=1000, empty_ok=False) or 100


def job_json(job: Job) -> dict[str, Any]:
    return job.model_dump(mode="json")


def conflict_json(conflict: Conflict) -> dict[str, Any]:
    return conflict.model_dump(mode="json")


async def list_jobs(request: Request) -> Response:
    """Newest first; `?status=pending|running|done|failed`, `?limit=`."""
    rt = runtime_of(request)
    status = _choice(request, "status", JOB_STATUSES)
    jobs = await rt.thread.run(rt.jobs.list, status, _limit(request))
    return JSONResponse([job_json(j) for j in jobs])


async def get_job(request: Request) -> Response:
    rt = runtime_of(request)
    job = await rt.thread.run(rt.jobs.get, request.path_params["job_id"])
    return JSONResponse(job_json(job))


async def retry_job(request: Request) -> Response:
    rt = runtime_of(request)
    job = await rt.thread.run(rt.jobs.retry, request.path_params["job_id"])
    return JSONResponse(job_json(job))


async def list_conflicts(request: Request) -> Response:
    """Newest first; `?status=open|resolved`, `?user=`, `?limit=`."""
    rt = runtime_of(request)
    status = _choice(request, "status", CONFLICT_STATUSES)
    book = ConflictBook(rt.store)
    conflicts = await rt.thread.run(
        lambda: book.list(
            status=status, user_id=request.query_params.get("user"), limit=_limit(request)
        )
    )
    return JSONResponse([conflict_json(c) for c in conflicts])


async def get_conflict(request: Request) -> Response:
    rt = runtime_of(request)
    conflict = await rt.thread.run(ConflictBook(rt.store).get, request.path_params["conflict_id"])
    return JSONResponse(conflict_json(conflict))


async def resolve_conflict(request: Request) -> Response:
    """Body `{"resolution": "keep_existing" | "take_new" | "keep_both"}`."""
    rt = runtime_of(request)
    try:
        body = json.loads(await request.body() or b"{}")
    except ValueError:
        raise bad_field("body", 'the body is not JSON; send {"resolution": "..."}') from None
    resolution = body.get("resolution") if isinstance(body, dict) else None
    if resolution not in RESOLUTIONS:
        raise bad_field(
            "resolution",
            f"resolution={resolution!r} is not accepted; use one of {', '.join(RESOLUTIONS)}",
        )
    conflict = await rt.thread.run(
        ConflictBook(rt.store).resolve, request.path_params["conflict_id"], resolution
    )
    return JSONResponse(conflict_json(conflict))


def jobs_routes() -> list[BaseRoute]:
    """Mount before the API's catch-all."""
    return [
        Route("/api/jobs", list_jobs, methods=["GET"]),
        Route("/api/jobs/{job_id}", get_job, methods=["GET"]),
        Route("/api/jobs/{job_id}/retry", retry_job, methods=["POST"]),
        Route("/api/conflicts", list_conflicts, methods=["GET"]),
        Route("/api/conflicts/{conflict_id}", get_conflict, methods=["GET"]),
        Route("/api/conflicts/{conflict_id}/resolve", resolve_conflict, methods=["POST"]),
    ]
