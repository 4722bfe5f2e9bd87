"""The extractor's API: `/api/jobs` (list, retry) and `/api/conflicts` (list, resolve)."""

from __future__ import annotations

from typing import Any

from starlette.routing import BaseRoute, Route

from beliefs.store.async_store import AsyncStore
from extractor.conflicts import CONFLICT_STATUSES, RESOLUTIONS, Conflict, ConflictBook
from extractor.jobs import JOB_STATUSES, Job, JobQueue
from proxy.api.endpoint import endpoint
from proxy.api.query_params import Query, query_int
from proxy.errors import bad_field


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


async def list_jobs(store: AsyncStore, jobs: JobQueue, params: Query) -> list[dict[str, Any]]:
    """Newest first; `?status=pending|running|done|failed`, `?limit=`."""
    status = _choice(params, "status", JOB_STATUSES)
    listed = await store.call(jobs.list, status, _limit(params))
    return [job_json(j) for j in listed]


async def get_job(store: AsyncStore, jobs: JobQueue, job_id: str) -> dict[str, Any]:
    return job_json(await store.call(jobs.get, job_id))


async def retry_job(store: AsyncStore, jobs: JobQueue, job_id: str) -> dict[str, Any]:
    return job_json(await store.call(jobs.retry, job_id))


async def list_conflicts(store: AsyncStore, params: Query) -> list[dict[str, Any]]:
    """Newest first; `?status=open|resolved`, `?user=`, `?limit=`."""
    status = _choice(params, "status", CONFLICT_STATUSES)
    user, limit = params.get("user"), _limit(params)
    conflicts = await store.apply(
        lambda s: ConflictBook(s).list(status=status, user_id=user, limit=limit)
    )
    return [conflict_json(c) for c in conflicts]


async def get_conflict(store: AsyncStore, conflict_id: str) -> dict[str, Any]:
    return conflict_json(await store.apply(lambda s: ConflictBook(s).get(conflict_id)))


async def resolve_conflict(
    store: AsyncStore, conflict_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    """Body `{"resolution": "keep_existing" | "take_new" | "keep_both"}`."""
    resolution = body.get("resolution")
    if resolution not in RESOLUTIONS:
        raise bad_field(
            "resolution",
            f"resolution={resolution!r} is not accepted; use one of {', '.join(RESOLUTIONS)}",
        )
    conflict = await store.apply(lambda s: ConflictBook(s).resolve(conflict_id, resolution))
    return conflict_json(conflict)


def jobs_routes(store: AsyncStore, jobs: JobQueue) -> list[BaseRoute]:
    """Mount before the API's catch-all."""
    job, conflict = "job_id", "conflict_id"
    return [
        Route("/api/jobs", endpoint(list_jobs, store, jobs, query=True), methods=["GET"]),
        Route("/api/jobs/{job_id}", endpoint(get_job, store, jobs, path=job), methods=["GET"]),
        Route(
            "/api/jobs/{job_id}/retry", endpoint(retry_job, store, jobs, path=job), methods=["POST"]
        ),
        Route("/api/conflicts", endpoint(list_conflicts, store, query=True), methods=["GET"]),
        Route(
            "/api/conflicts/{conflict_id}",
            endpoint(get_conflict, store, path=conflict),
            methods=["GET"],
        ),
        Route(
            "/api/conflicts/{conflict_id}/resolve",
            endpoint(resolve_conflict, store, path=conflict, body=True),
            methods=["POST"],
        ),
    ]
