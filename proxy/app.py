"""The app factory: proxy paths, the JSON API and `/healthz` in one Starlette app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute
from starlette.types import Receive, Scope, Send

from beliefs.store.belief_store import BeliefStore
from extractor.llm import ChatModel
from proxy.api.beliefs import belief_routes
from proxy.api.compaction import compaction_routes
from proxy.api.delivery import delivery_routes
from proxy.api.health import Health
from proxy.api.jobs import jobs_routes
from proxy.api.loading import LoadingGate
from proxy.api.openapi import openapi_routes
from proxy.api.routes import api_routes
from proxy.api.server import home_routes
from proxy.api.sources import Documents, source_routes
from proxy.api.tokens import token_routes
from proxy.api.visibility import visibility_routes
from proxy.cli.home_record import home_id
from proxy.gateway.parts import Gateway
from proxy.gateway.routes import ProxyEndpoint, ProxyRoute, first_segments
from proxy.gateway.upstream_pool import UpstreamPool
from proxy.mcp.endpoint import McpStarter, mcp_routes, scoped_mcp_route
from proxy.mcp.tools import MemoryTools
from proxy.runtime import Runtime
from proxy.scopes import open_to_clients
from proxy.security.access import FailedAttempts, Sessions, is_loopback
from proxy.security.credentials import Credentials
from proxy.security.csrf import BrowserGuard, refuse_browsers
from proxy.security.middleware import GatewayMiddleware, is_proxy_path
from proxy.security.shared import SharedAccess
from proxy.security.tables import MIGRATIONS as SECURITY_TABLES
from proxy.security.tokens import TokenBook, list_tokens
from proxy.settings import Settings
from proxy.ui import ui_routes


@dataclass(frozen=True)
class Access:
    """Who may call: the tokens, the browser sessions and the wrong keys per address, which
    the access middleware, the token API and the login form share."""

    tokens: TokenBook
    sessions: Sessions
    failures: FailedAttempts
    credentials: Credentials


def create_app(
    settings: Settings,
    *,
    store: BeliefStore | None = None,
    upstream: UpstreamPool | None = None,
    llm: ChatModel | None = None,
) -> Starlette:
    """The gateway. Collaborators default to the real thing: the DuckDB store at
    `settings.db_path`, the pooled upstream client, the extraction model from settings. Given
    ones are used as they are and left open at shutdown. Tenure's own routes are built once
    the lifespan has opened what they use."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        runtime = await Runtime.open(settings, store=store, upstream=upstream, llm=llm)
        app.state.runtime = runtime  # the middleware and the tests read it
        endpoint.attach(gateway_of(runtime))
        beliefs = runtime.async_store
        await beliefs.apply(BeliefStore.ensure_schema, SECURITY_TABLES)
        access.tokens.replace(await beliefs.apply(list_tokens))
        tools = MemoryTools(settings, beliefs, runtime.persona, runtime.chat_states)
        mcp = McpStarter(tools)
        mcp.start()
        app.router.routes[:] = own_routes(runtime, mcp, access, proxy)
        shared = None
        if runtime.store.dialect == "postgresql":  # replicas: one login, logout and limit
            shared = SharedAccess(
                runtime.thread, runtime.store, access.sessions, access.failures, access.tokens
            )
            await shared.start()
            access.credentials.refresh = shared.reload_tokens
        try:
            yield
        finally:
            if shared is not None:
                access.credentials.refresh = None
                await shared.stop()
            await mcp.stop()
            endpoint.detach()
            await runtime.close()

    endpoint = ProxyEndpoint(
        guard=partial(
            refuse_browsers,
            loopback_only=is_loopback(settings.host),
            allowed_origins=settings.allowed_origins,
        )
    )
    proxy = open_to_clients(endpoint)  # it confines the user to a client token's
    tokens = TokenBook()  # the access tokens, read from the store as the app starts
    sessions = Sessions()  # the browser sessions, shared with the login and logout forms
    failures = FailedAttempts()  # wrong access keys per address, shared with the login form
    access = Access(tokens, sessions, failures, Credentials(settings.api_key, tokens, sessions))
    front = GatewayMiddleware(None, access.credentials, proxy=proxy, failures=failures)
    app = TenureApp(
        front,
        middleware=[
            Middleware(front.around),
            Middleware(BrowserGuard, loopback_only=is_loopback(settings.host)),
            Middleware(LoadingGate),
        ],
        lifespan=lifespan,
    )
    return app


class TenureApp(Starlette):
    """Starlette, with the proxy paths handed straight to the gateway middleware: Starlette's
    error layer and the rest of the stack do nothing for them (the middleware answers every
    error), and skipping them saves a `send` wrapper per message of every reply."""

    def __init__(self, front: GatewayMiddleware, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.front = front

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and is_proxy_path(scope["path"]):
            scope["app"] = self
            await self.front.proxy_call(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def gateway_of(runtime: Runtime) -> Gateway:
    """The proxy paths' collaborators, from the running resources."""
    return Gateway(
        settings=runtime.settings,
        upstream=runtime.upstream,
        memory=runtime.memory,
        loops=runtime.loops,
        chat_states=runtime.chat_states,
        writer=runtime.writer,
        counters=runtime.counters,
        seen=runtime.seen,
    )


def own_routes(
    runtime: Runtime, mcp: McpStarter, access: Access, proxy: ProxyEndpoint
) -> list[BaseRoute]:
    """Every route, each given what it uses; the proxy's catch-all last."""
    settings, store, user = runtime.settings, runtime.async_store, runtime.settings.default_user
    documents = Documents(runtime.store, runtime.thread, settings)
    health = Health(
        settings=settings,
        store=store,
        jobs=runtime.jobs,
        writer=runtime.writer,
        counters=runtime.counters,
        workers=runtime.workers,
        scheduler=runtime.scheduler,
        follower=runtime.follower,
    )
    routes: list[BaseRoute] = [
        *delivery_routes(store, settings, runtime.persona),
        *openapi_routes(),
        *belief_routes(store, user),  # its GET /api/beliefs (search, prefix) answers first
        *visibility_routes(store),
        *jobs_routes(store, runtime.jobs),  # before the API's catch-all
        *compaction_routes(store, runtime.compactor, runtime.scheduler, runtime.persona, user),
        *mcp_routes(mcp, store),
        *home_routes(store, settings, home_id),
        *source_routes(documents),
        *token_routes(store, access.tokens),
        *api_routes(store, health),
        *ui_routes(
            settings,
            store=store,
            jobs=runtime.jobs,
            compactor=runtime.compactor,
            scheduler=runtime.scheduler,
            keeper=runtime.persona,
            health=health,
            credentials=access.credentials,
            failures=access.failures,
            documents=documents,
        ),
    ]
    # Last: every other path is a proxy path (with or without /v1, or under /scope/…), except
    # under Tenure's own first segments, where a wrong method is answered here (405), not sent
    # to the provider.
    routes.append(ProxyRoute(proxy, reserved=first_segments(routes)))
    routes.insert(0, scoped_mcp_route(mcp))  # `scope` stays a proxy first segment
    return routes
