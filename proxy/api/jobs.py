"""The extractor's API: `/api/jobs` (list, retry) and `/api/conflicts` (list, resolve)."""

from __future__ import annotations

from typing import Any

from starlette.routing import BaseRoute, Route

from extractor.conflicts import CONFLICT_STATUSES, RESOLUTIONS, Conflict, ConflictBook
from extractor.jobs import JOB_STATUSES, Job
from proxy.api.endpoint import endpoint
from proxy.api.query_params import Query, query_int
from proxy.errors import bad_field
from proxy.runtime import Runtime


def _choice(params: Query, name: str, accepted: tuple[str, ...]) -> str | None:
    raw = params.get(name)
    if raw is not None and raw not in accepted:
        raise bad_field(name, f"{name}={raw!r} is not accepted; use one of {', '.join(accepted)}")
    return raw


def _limit(params: Query) -> int:
    return query_int(params, "limit", 100, low=1, high=1000, empty_ok=False) or 100


def job_json(job: Job) -> dict[str, Any]:
    return job.model_dump(mode="json")


def conflict_json(conflict: Conflict) -> dict[str, Any]:
    return conflict.model_dump(mode="json")


async def list_jobs(rt: Runtime, params: Query) -> list[dict[str, Any]]:
    """Newest first; `?status=pending|running|done|failed`, `?limit=`."""
    status = _choice(params, "status", JOB_STATUSES)
    jobs = await rt.thread.run(rt.jobs.list, status, _limit(params))
    return [job_json(j) for j in jobs]


async def get_job(rt: Runtime, job_id: str) -> dict[str, Any]:
    return job_json(await rt.thread.run(rt.jobs.get, job_id))


async def retry_job(rt: Runtime, job_id: str) -> dict[str, Any]:
    return job_json(await rt.thread.run(rt.jobs.retry, job_id))


async def list_conflicts(rt: Runtime, params: Query) -> list[dict[str, Any]]:
    """Newest first; `?status=open|resolved`, `?user=`, `?limit=`."""
    status = _choice(params, "status", CONFLICT_STATUSES)
    user, limit = params.get("user"), _limit(params)
    book = ConflictBook(rt.store)
    conflicts = await rt.thread.run(lambda: book.list(status=status, user_id=user, limit=limit))
    return [conflict_json(c) for c in conflicts]


async def get_conflict(rt: Runtime, conflict_id: str) -> dict[str, Any]:
    return conflict_json(await rt.thread.run(ConflictBook(rt.store).get, conflict_id))


async def resolve_conflict(rt: Runtime, conflict_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """Body `{"resolution": "keep_existing" | "take_new" | "keep_both"}`."""
    resolution = body.get("resolution")
    if resolution not in RESOLUTIONS:
        raise bad_field(
            "resolution",
            f"resolution={resolution!r} is not accepted; use one of {', '.join(RESOLUTIONS)}",
        )
    conflict = await rt.thread.run(ConflictBook(rt.store).resolve, conflict_id, resolution)
    return conflict_json(conflict)


def jobs_routes() -> list[BaseRoute]:
    """Mount before the API's catch-all."""
    job, conflict = "job_id", "conflict_id"
    return [
        Route("/api/jobs", endpoint(list_jobs, query=True), methods=["GET"]),
        Route("/api/jobs/{job_id}", endpoint(get_job, path=job), methods=["GET"]),
        Route("/api/jobs/{job_id}/retry", endpoint(retry_job, path=job), methods=["POST"]),
        Route("/api/conflicts", endpoint(list_conflicts, query=True), methods=["GET"]),
        Route(
            "/api/conflicts/{conflict_id}", endpoint(get_conflict, path=conflict), methods=["GET"]
        ),
        Route(
            "/api/conflicts/{conflict_id}/resolve",
            endpoint(resolve_conflict, path=conflict, body=True),
            methods=["POST"],
        ),
    ]
