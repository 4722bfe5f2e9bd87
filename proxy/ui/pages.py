"""The pages: each reads its data through the JSON API's operations and renders it (escaped)
as HTML."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, get_args

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from beliefs.model.models import BeliefType, Delivery, EpistemicStatus, ReviewState, utcnow
from beliefs.store.async_store import AsyncStore
from compaction import RUN_COUNTS, CompactionScheduler
from extractor.jobs import JobQueue
from proxy.api import beliefs as belief_api
from proxy.api.compaction import compaction_runs, get_persona
from proxy.api.health import Health
from proxy.api.jobs import get_job, list_conflicts, list_jobs
from proxy.api.openapi import describe
from proxy.api.routes import list_injections
from proxy.api.visibility import always_on_events
from proxy.mcp.audit import calls
from proxy.settings import Settings
from proxy.ui.outcome import Outcome, attempt, query
from proxy.ui.render import Renderer

LIST_LIMIT = 200
NOTICES = {
    "created": "Belief added.",
    "saved": "Saved.",
    "pinned": "Pinned: delivered on every turn in its scope.",
    "unpinned": "Unpinned.",
    "shared": "Shared: every agent of this user receives it now.",
    "unshared": "Unshared: only the agent that wrote it receives it.",
    "confirmed": "Confirmed.",
    "rejected": "Rejected: it will no longer be delivered (it is kept, not deleted).",
    "pending": "Marked pending.",
    "restored": "Restored.",
    "retried": "Job queued again.",
    "resolved": "Conflict resolved.",
    "compacted": "Compaction run finished.",
    "persona": "Persona saved.",
    "rule_added": "Rule added: it applies from the next request.",
    "rule_saved": "Rule saved: it applies from the next request.",
    "rule_deleted": "Rule deleted. A shipped default stays deleted, even after an upgrade.",
}
CHOICE_FILTERS = (
    ("type", get_args(BeliefType)),
    ("status", get_args(EpistemicStatus)),
    ("review_state", get_args(ReviewState)),
)
_FILTER_KEYS = ("q", "user", "scope", "agent", "type", "status", "review_state", "pinned")


def _base_url(settings: Settings) -> str:
    host = settings.host if settings.host not in ("0.0.0.0", "::") else "localhost"
    if host in ("127.0.0.1", "::1"):
        host = "localhost"
    return f"http://{host}:{settings.port}"


def _listed(result: Outcome) -> list[Any] | None:
    """The list an operation answered, or None when it failed."""
    if result.ok and isinstance(result.data, list):
        return result.data
    return None


def _after_breaker(jobs: list[Any] | None, breaker: dict[str, Any] | None) -> list[Any] | None:
    """Pending jobs with the time they will really be tried: while the breaker is open none
    is tried before it lets calls through, whatever its own backoff says."""
    if not jobs or not breaker or breaker.get("state") != "open":
        return jobs
    resumes = (utcnow() + timedelta(seconds=float(breaker.get("retry_in_s") or 0))).isoformat()
    return [
        {**job, "next_attempt_at": resumes}
        if not job.get("next_attempt_at") or _later(resumes, job["next_attempt_at"])
        else job
        for job in jobs
    ]


def _later(a: Any, b: Any) -> bool:
    """Whether timestamp `a` is after `b` (ISO strings; False when either is missing)."""
    try:
        return datetime.fromisoformat(str(a)) > datetime.fromisoformat(str(b))
    except ValueError:
        return False


def _runs(result: Outcome) -> tuple[list[Any] | None, dict[str, Any] | None]:
    """Compaction runs (newest first) and the scheduler's state, when the server has them."""
    if result.ok and isinstance(result.data, dict):
        runs = result.data.get("runs")
        scheduler = result.data.get("scheduler")
        return (
            runs if isinstance(runs, list) else [],
            scheduler if isinstance(scheduler, dict) else None,
        )
    return _listed(result), None


def _persona(result: Outcome) -> dict[str, Any] | None:
    return result.data if result.ok and isinstance(result.data, dict) else {}


class Pages:
    """The pages and what they read: the store, the job queue, the compaction scheduler, the
    health check and the settings (the default user, the address the pages show)."""

    def __init__(
        self,
        renderer: Renderer,
        *,
        settings: Settings,
        store: AsyncStore,
        jobs: JobQueue,
        scheduler: CompactionScheduler,
        health: Health,
    ) -> None:
        self.renderer = renderer
        self.settings = settings
        self.store = store
        self.jobs = jobs
        self.scheduler = scheduler
        self.health = health

    def _page(self, request: Request, template: str, **context: Any) -> HTMLResponse:
        notice = NOTICES.get(request.query_params.get("notice", ""))
        return self.renderer.page(request, template, notice=notice, **context)

    def problem(self, request: Request, result: Outcome, *, title: str, back: str) -> HTMLResponse:
        return self.renderer.page(
            request,
            "error.html",
            status=result.status if result.status >= 400 else 500,
            title=title,
            message=result.message or f"the server answered {result.status}",
            field=result.field,
            back=back,
        )

    async def home(self, request: Request) -> Response:
        return RedirectResponse("/beliefs", status_code=303)

    async def favicon(self, request: Request) -> Response:
        return RedirectResponse("/static/favicon.svg", status_code=301)

    async def api(self, request: Request) -> Response:
        """The API's endpoints as a page; the raw OpenAPI document is one link away."""
        return self._page(request, "api.html", active="api", doc=describe(request.app.routes))

    async def beliefs(self, request: Request) -> Response:
        params = request.query_params
        filters: dict[str, Any] = {key: params.get(key, "").strip() for key in _FILTER_KEYS}
        filters["include_superseded"] = params.get("include_superseded") == "true"
        filters["include_deleted"] = params.get("include_deleted") == "true"
        filters["open"] = any(filters[k] for k in _FILTER_KEYS[2:]) or filters["include_superseded"]
        asked = {k: v for k, v in filters.items() if k in _FILTER_KEYS and v}
        for flag in ("include_superseded", "include_deleted"):
            if filters[flag]:
                asked[flag] = True
        listing = await attempt(
            belief_api.list_beliefs, self.store, query(limit=LIST_LIMIT, **asked)
        )
        facets = await attempt(belief_api.facets, self.store, query(user=filters["user"]))
        deleted = None
        if params.get("deleted"):
            found = await attempt(belief_api.get_belief, self.store, params["deleted"])
            deleted = found.data if found.ok and found.data.get("deleted_at") else None
        facet_data = facets.data if facets.ok else {"scopes": [], "users": []}
        beliefs = listing.data if listing.ok else []
        return self._page(
            request,
            "beliefs.html",
            active="beliefs",
            beliefs=beliefs,
            error_list=None if listing.ok else listing.message,
            truncated=len(beliefs) >= LIST_LIMIT,
            anything=bool(facet_data["users"]) or bool(asked),
            scope_counts=facet_data["scopes"],
            users=facet_data["users"],
            filters=filters,
            choice_filters=CHOICE_FILTERS,
            deleted=deleted,
            base_url=_base_url(self.settings),
            default_user=self.settings.default_user,
            types=get_args(BeliefType),
        )

    async def belief(self, request: Request) -> Response:
        belief_id = request.path_params["belief_id"]
        found = await attempt(belief_api.get_belief, self.store, belief_id)
        if not found.ok:
            return self.problem(request, found, title="Belief not found", back="/beliefs")
        chain = await attempt(belief_api.belief_chain, self.store, belief_id)
        history = await attempt(belief_api.belief_history, self.store, belief_id)
        injections = await attempt(
            belief_api.belief_injections, self.store, belief_id, query(limit=50)
        )
        expires = found.data.get("expires_at")
        return self._page(
            request,
            "belief.html",
            active="beliefs",
            b=found.data,
            expired=bool(expires) and not _later(expires, utcnow().isoformat()),
            chain=_listed(chain) or [found.data],
            history=_listed(history) or [],
            injections=_listed(injections),
            statuses=[s for s in get_args(EpistemicStatus) if s != "superseded"],
            deliveries=get_args(Delivery),
        )

    async def review(self, request: Request) -> Response:
        pending = await attempt(
            belief_api.list_beliefs, self.store, query(review_state="pending", limit=LIST_LIMIT)
        )
        conflicts = _listed(await attempt(list_conflicts, self.store, query(status="open")))
        related: dict[str, Any] = {}
        if conflicts:
            ids = {c["existing_id"] for c in conflicts} | {
                c["new_id"] for c in conflicts if c.get("new_id")
            }
            listing = query(ids=",".join(sorted(ids)))
            found = _listed(await attempt(belief_api.list_beliefs, self.store, listing)) or []
            related = {b["id"]: b for b in found}
        return self._page(
            request,
            "review.html",
            active="review",
            pending=_listed(pending) or [],
            conflicts=conflicts,
            related=related,
        )

    async def audit(self, request: Request) -> Response:
        params = request.query_params
        filters = {k: params.get(k, "").strip() for k in ("user", "belief_id", "request_id")}
        records = _listed(
            await attempt(
                list_injections, self.store, query(limit=100, as_injected=True, **filters)
            )
        )
        tool_calls = _listed(
            await attempt(
                calls,
                self.store,
                query(limit=100, user=filters["user"], belief_id=filters["belief_id"]),
            )
        )
        always_on = _listed(
            await attempt(
                always_on_events,
                self.store,
                query(limit=100, user=filters["user"], belief_id=filters["belief_id"]),
            )
        )
        return self._page(
            request,
            "audit.html",
            active="audit",
            records=records,
            tool_calls=tool_calls,
            always_on=always_on,
            filters=filters,
            base_url=_base_url(self.settings),
        )

    async def status(self, request: Request) -> Response:
        user = request.query_params.get("user", "").strip() or self.settings.default_user
        healthy = await attempt(self.health.report)
        health_data = healthy.data if isinstance(healthy.data, dict) else None
        persona = await attempt(
            get_persona, self.store, self.settings.default_user, query(user=user)
        )
        runs, scheduler = _runs(
            await attempt(compaction_runs, self.store, self.scheduler, query(limit=20))
        )
        breaker = (health_data or {}).get("extractor")
        pending = _listed(await attempt(list_jobs, self.store, self.jobs, query(status="pending")))
        return self._page(
            request,
            "status.html",
            active="status",
            health=health_data,
            breaker=breaker,
            pending=_after_breaker(pending, breaker),
            failed=_listed(await attempt(list_jobs, self.store, self.jobs, query(status="failed"))),
            runs=runs,
            scheduler=scheduler,
            persona=_persona(persona),
            user=user,
            counts=RUN_COUNTS,
        )

    async def job(self, request: Request) -> Response:
        """One extraction job: its turn, error, written beliefs and the model's raw reply."""
        found = await attempt(get_job, self.store, self.jobs, request.path_params["job_id"])
        if not found.ok:
            return self.problem(request, found, title="Job not found", back="/status")
        return self._page(request, "job.html", active="status", j=found.data)
