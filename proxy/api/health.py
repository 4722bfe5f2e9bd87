"""`/healthz`: whether the store answers and takes writes, how far behind extraction is, and
the counters, breaker, compaction and replica state behind that answer."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from beliefs.store.async_store import AsyncStore
from compaction import CompactionScheduler
from extractor.jobs import JobQueue
from extractor.worker import ExtractionWorkers
from proxy.gateway.background import StoreWriter
from proxy.gateway.counters import Counters
from proxy.gateway.replicas import Follower
from proxy.settings import Settings


@dataclass(frozen=True)
class Health:
    """What the health check reads: the store, the writer and the job queue behind it, the
    extraction workers, the compaction scheduler and, on PostgreSQL, the follower."""

    settings: Settings
    store: AsyncStore
    jobs: JobQueue
    writer: StoreWriter
    counters: Counters
    workers: ExtractionWorkers | None
    scheduler: CompactionScheduler
    follower: Follower | None

    def _breaker(self) -> dict[str, Any] | None:
        return self.workers.breaker_state() if self.workers is not None else None

    async def replica(self) -> dict[str, Any]:
        """Which backend, which replica, how far behind the others' writes its memory is, and
        which replica holds each running job until when (PostgreSQL only)."""
        feed = self.store.store.feed
        out: dict[str, Any] = {
            "backend": self.settings.backend,
            "id": feed.origin if feed is not None else None,
            "change_feed": None,
            "job_leases": None,
        }
        if feed is not None:
            try:
                out["job_leases"] = await asyncio.wait_for(self.store.call(self.jobs.leases), 2)
            except Exception as exc:
                out["job_leases"] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
            try:
                status = await asyncio.wait_for(self.store.apply(feed.status), 2)
            except Exception as exc:
                status = {"error": f"{type(exc).__name__}: {exc}"[:200]}
            listener = self.follower.listener.connected if self.follower is not None else False
            out["change_feed"] = {**status, "listening": listener}
        return out

    def job_backlog(self, stored: tuple[int, float] | None) -> tuple[dict[str, Any], str]:
        """The extraction backlog, the jobs still in memory (not in the store yet) counted in, and
        why it degrades the server ("" when it does not): more pending jobs than
        TENURE_EXTRACT_BACKLOG_DEGRADED, or an oldest one older than ..._DEGRADED_AGE_S."""
        waiting, waiting_age = self.writer.jobs_waiting()
        in_store, store_age = stored if stored is not None else (0, 0.0)
        pending, age = in_store + waiting, max(store_age, waiting_age)
        settings = self.settings
        jobs = {
            "pending": pending,
            "in_store": stored[0] if stored is not None else None,
            "in_memory": waiting,
            "oldest_pending_age_s": round(age, 3),
            "degraded_at": settings.extract_backlog_degraded,
            "degraded_age_s": settings.extract_backlog_degraded_age_s,
            "backlog_max": settings.extract_backlog_max,
            "shed": self.jobs.shed,
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

    async def report(self) -> dict[str, Any]:
        """ "ok"; "busy" when the store thread is behind on queued writes; "degraded" when the
        store fails or refuses writes or the extraction backlog is behind, with the reasons."""
        status, store_ok = "ok", True
        reasons: list[str] = []
        backlog: tuple[int, float] | None = None
        try:
            await asyncio.wait_for(self.store.apply(lambda s: s.execute("SELECT 1").fetchone()), 2)
            backlog = await asyncio.wait_for(self.store.call(self.jobs.backlog), 2)
        except TimeoutError:
            status = "busy"
        except Exception as exc:
            status, store_ok = "degraded", False
            reasons.append(f"the store does not answer: {type(exc).__name__}: {exc}"[:300])
        if self.store.index.failed is not None:
            status, store_ok = "degraded", False
            reasons.append(
                f"the beliefs could not be loaded ({self.store.index.failed}); memory is off until "
                "the server is restarted with a readable database"
            )
        jobs, late = self.job_backlog(backlog)
        if late:
            status = "degraded"
            reasons.append(late)
        writes = self.writer.health()
        if not writes.ok:
            status, store_ok = "degraded", False
            fix = (
                "check that the PostgreSQL server TENURE_DATABASE_URL names is up and reachable"
                if self.store.dialect == "postgresql"
                else "free disk space or fix the data directory's permissions"
            )
            reasons.append(
                f"the store refuses writes ({writes.reason}); {writes.kept} write(s) kept in "
                f"memory and tried again until it takes them; {fix}"
            )
        body: dict[str, Any] = {
            "status": status,
            "reasons": reasons,
            "loading": not self.store.index.ready.is_set(),
            "store": {
                "ok": store_ok,
                "beliefs_in_memory": len(self.store.index),
                "loading": not self.store.index.ready.is_set(),
                "load_failed": self.store.index.failed,
                **self._bound(),
            },
            "counters": self.counters.as_dict(),
            "pending_writes": self.writer.pending,
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
            breaker = self._breaker()
        except Exception:
            breaker = {"error": "breaker state unavailable"}
        if breaker is not None:
            body["extractor"] = breaker
            if breaker.get(
                "config_fault"
            ):  # the proxy still answers: 200, yet memory is not forming
                body["status"] = "degraded"
                reasons.append(f"extraction is misconfigured: {breaker['config_fault']}")
        body["compaction"] = self.scheduler.state()
        body["replica"] = await self.replica()
        return body

    async def healthz(self, request: Request) -> Response:
        """200 "ok"; 200 "busy" when the store thread is behind on queued writes; 503 "degraded"
        when the store fails or refuses writes, with the reasons. A backlog that is behind is
        "degraded" with 200: the replica still serves, and every replica shares the backlog."""
        body = await self.report()
        return JSONResponse(body, status_code=200 if body["store"]["ok"] else 503)

    def _bound(self) -> dict[str, Any]:
        """A bounded index's figures (nothing when it holds every belief)."""
        index = self.store.index
        if not index.bounded:
            return {}
        return {
            "index_bound": index.bound,
            "users_in_memory": index.users_held,
            "user_loads": index.loads,
            "user_evictions": index.evictions,
        }


def health_routes(health: Health) -> list[BaseRoute]:
    return [Route("/healthz", health.healthz, methods=["GET"])]
