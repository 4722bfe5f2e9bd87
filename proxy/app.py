"""The app factory: proxy paths, the JSON API and `/healthz` in one Starlette app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute

from beliefs.store.belief_store import BeliefStore
from extractor.llm import ChatModel
from proxy.api.beliefs import belief_routes
from proxy.api.compaction import compaction_routes
from proxy.api.delivery import delivery_routes
from proxy.api.jobs import jobs_routes
from proxy.api.loading import LoadingGate
from proxy.api.openapi import openapi_routes
from proxy.api.routes import api_routes
from proxy.api.server import home_routes
from proxy.api.sources import source_routes
from proxy.api.tokens import token_routes
from proxy.gateway.routes import ProxyEndpoint, ProxyRoute, first_segments
from proxy.gateway.upstream_pool import UpstreamPool
from proxy.mcp.endpoint import McpStarter, mcp_routes, memory_tools, scoped_mcp_route
from proxy.runtime import Runtime
from proxy.security.access import FailedAttempts, Sessions, is_loopback
from proxy.security.credentials import Credentials
from proxy.security.csrf import BrowserGuard
from proxy.security.grants import open_to_clients
from proxy.security.middleware import GatewayMiddleware
from proxy.security.shared import SharedAccess
from proxy.security.tables import MIGRATIONS as SECURITY_TABLES
from proxy.security.tokens import TokenBook, list_tokens
from proxy.settings import Settings
from proxy.ui import ui_routes


def create_app(
    settings: Settings,
    *,
    store: BeliefStore | None = None,
    upstream: UpstreamPool | None = None,
    llm: ChatModel | None = None,
) -> Starlette:
    """The gateway. Collaborators default to the real thing: the DuckDB store at
    `settings.db_path`, the pooled upstream client, the extraction model from settings. Given
    ones are used as they are and left open at shutdown."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        runtime = await Runtime.open(settings, store=store, upstream=upstream, llm=llm)
        app.state.runtime = runtime
        await runtime.thread.run(runtime.store.ensure_schema, SECURITY_TABLES)
        tokens.replace(await runtime.thread.run(list_tokens, runtime.store))
        app.state.mcp = mcp = McpStarter(memory_tools(runtime))
        mcp.start()
        shared = None
        if runtime.store.dialect == "postgresql":  # replicas: one login, logout and limit
            shared = SharedAccess(runtime.thread, runtime.store, sessions, failures, tokens)
            await shared.start()
            credentials.refresh = shared.reload_tokens
        try:
            yield
        finally:
            if shared is not None:
                credentials.refresh = None
                await shared.stop()
            await mcp.stop()
            await runtime.close()

    proxy = open_to_clients(ProxyEndpoint())  # it confines the user to a client token's
    routes: list[BaseRoute] = [
        *delivery_routes(),
        *openapi_routes(),
        *belief_routes(),  # its GET /api/beliefs (search, prefix) answers before the plain list
        *jobs_routes(),  # before the API's catch-all
        *compaction_routes(),
        *mcp_routes(),
        *home_routes(),
        *source_routes(),
        *token_routes(),
        *api_routes(),
        *ui_routes(settings),
    ]
    # Last: every other path is a proxy path (with or without /v1, or under /scope/…), except
    # under Tenure's own first segments, where a wrong method is answered here (405), not sent
    # to the provider.
    routes.append(ProxyRoute(proxy, reserved=first_segments(routes)))
    routes.insert(0, scoped_mcp_route())  # `scope` stays a proxy first segment
    failures = FailedAttempts()  # wrong access keys per address, shared with the login form
    sessions = Sessions()  # the browser sessions, shared with the login and logout forms
    tokens = TokenBook()  # the access tokens, read from the store as the app starts
    credentials = Credentials(settings.api_key, tokens, sessions)
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(GatewayMiddleware, credentials=credentials, proxy=proxy, failures=failures),
            Middleware(BrowserGuard, loopback_only=is_loopback(settings.host)),
            Middleware(LoadingGate),
        ],
        lifespan=lifespan,
    )
    app.state.failed_logins = failures
    app.state.sessions = sessions
    app.state.tokens = tokens
    app.state.credentials = credentials
    return app
