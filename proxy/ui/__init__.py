"""The web UI: server-rendered pages over the JSON API, usable without JavaScript."""

from __future__ import annotations

from pathlib import Path

from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from beliefs.store.async_store import AsyncStore
from compaction import CompactionScheduler, Compactor, PersonaKeeper
from extractor.jobs import JobQueue
from proxy.api.health import Health
from proxy.api.sources import Documents
from proxy.security.access import FailedAttempts
from proxy.security.credentials import Credentials
from proxy.settings import Settings
from proxy.ui.forms import Forms
from proxy.ui.pages import Pages
from proxy.ui.render import Renderer
from proxy.ui.rules import RulesPage
from proxy.ui.sources import SourcesPage

__all__ = ["STATIC", "ui_routes"]

STATIC = Path(__file__).resolve().parent.parent / "static"


def ui_routes(
    settings: Settings,
    *,
    store: AsyncStore,
    jobs: JobQueue,
    compactor: Compactor,
    scheduler: CompactionScheduler,
    keeper: PersonaKeeper,
    health: Health,
    credentials: Credentials,
    failures: FailedAttempts,
    documents: Documents,
) -> list[BaseRoute]:
    """The pages, their form posts, the login page and the static files."""
    renderer = Renderer(login_enabled=bool(settings.api_key))
    pages = Pages(
        renderer, settings=settings, store=store, jobs=jobs, scheduler=scheduler, health=health
    )
    forms = Forms(
        pages, compactor=compactor, keeper=keeper, credentials=credentials, failures=failures
    )
    rules = RulesPage(pages, forms, keeper)
    sources = SourcesPage(pages, forms, documents)
    get, post = ["GET"], ["POST"]
    return [
        Route("/", pages.home, methods=get),
        Route("/favicon.ico", pages.favicon, methods=get),
        Route("/beliefs", pages.beliefs, methods=get),
        Route("/beliefs", forms.create, methods=post),
        Route("/beliefs/{belief_id}", pages.belief, methods=get),
        Route("/beliefs/{belief_id}/edit", forms.edit, methods=post),
        Route("/beliefs/{belief_id}/pin", forms.pin, methods=post),
        Route("/beliefs/{belief_id}/share", forms.share, methods=post),
        Route("/beliefs/{belief_id}/review", forms.review, methods=post),
        Route("/beliefs/{belief_id}/delete", forms.delete, methods=post),
        Route("/beliefs/{belief_id}/restore", forms.restore, methods=post),
        Route("/review", pages.review, methods=get),
        Route("/review/conflicts/{conflict_id}/resolve", forms.resolve_conflict, methods=post),
        Route("/audit", pages.audit, methods=get),
        Route("/rules", rules.page, methods=get),
        Route("/rules", rules.add, methods=post),
        Route("/rules/{rule_id}/edit", rules.edit, methods=post),
        Route("/rules/{rule_id}/delete", rules.delete, methods=post),
        Route("/sources", sources.page, methods=get),
        Route("/sources", sources.upload, methods=post),
        Route("/sources/{source_id}", sources.source, methods=get),
        Route("/sources/{source_id}/delete", sources.delete, methods=post),
        Route("/sources/{source_id}/restore", sources.restore, methods=post),
        Route("/status", pages.status, methods=get),
        Route("/status/jobs/{job_id}", pages.job, methods=get),
        Route("/status/jobs/{job_id}/retry", forms.retry_job, methods=post),
        Route("/status/compaction", forms.compact_now, methods=post),
        Route("/status/persona", forms.save_persona, methods=post),
        Route("/api-reference", pages.api, methods=get),
        Route("/login", forms.login_page, methods=get),
        Route("/login", forms.login, methods=post),
        Route("/logout", forms.logout, methods=post),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
