"""`/mcp` over HTTP without the SDK on the start-up path: the routes resolve the caller like a
gateway request and hand the request to the SDK's session manager, which `McpStarter` imports
and starts when the first MCP request comes (the SDK costs about a second of interpreter time
and 30 MB resident, which a server no MCP client talks to need not spend). That request, and
any that come meanwhile, wait for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from typing import TYPE_CHECKING

from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from beliefs.store.async_store import AsyncStore
from proxy.errors import ProxyError
from proxy.gateway.identity import header_text, resolve_identity
from proxy.mcp.audit import audit_routes
from proxy.mcp.caller import CALLER
from proxy.mcp.tools import MemoryTools
from proxy.scopes import client_grant, open_to_clients

if TYPE_CHECKING:
    from proxy.mcp.server import McpService

log = logging.getLogger("tenure.mcp")


class McpStarter:
    """Imports the SDK when first asked for its service and runs its session manager on a task
    of its own from then on, for the app's life."""

    def __init__(self, tools: MemoryTools) -> None:
        self.tools = tools
        self._service: asyncio.Future[McpService] | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._open = False

    def start(self) -> None:
        """Let requests start the SDK (until `stop`)."""
        self._open = True

    def _launch(self) -> asyncio.Future[McpService]:
        if self._service is None:
            self._service = asyncio.get_running_loop().create_future()
            self._task = asyncio.create_task(self._run(), name="tenure-mcp")
        return self._service

    async def _run(self) -> None:
        assert self._service is not None
        try:
            server = await asyncio.to_thread(importlib.import_module, "proxy.mcp.server")
            async with server.running_mcp(self.tools) as service:
                self._service.set_result(service)
                await self._stop.wait()
        except Exception as exc:
            log.exception("the MCP server did not start")
            if not self._service.done():
                self._service.set_exception(exc)

    async def service(self) -> McpService:
        if not self._open:
            raise ProxyError(503, "the MCP server is not running", type="server_error")
        try:
            return await asyncio.shield(self._launch())
        except Exception as exc:
            raise ProxyError(
                503,
                f"the MCP server did not start ({type(exc).__name__}: {exc}); see the server log",
                type="server_error",
            ) from None

    async def stop(self) -> None:
        self._open = False
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task
        if self._service is not None and not self._service.done():
            self._service.cancel()


class McpEndpoint:
    """`/mcp` and `/scope/<scope>/mcp`: resolve the caller like a gateway request, then hand
    the request to the SDK."""

    def __init__(self, starter: McpStarter) -> None:
        self.starter = starter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        service = await self.starter.service()
        settings = service.tools.settings
        headers = {k.decode("latin-1"): header_text(v) for k, v in scope["headers"]}
        url_scope = scope.get("path_params", {}).get("scope")
        grant = client_grant(scope)
        identity = resolve_identity(
            headers,
            {},
            url_scope=url_scope,
            default_user=grant.user_id or "" if grant else settings.default_user,
        )
        if grant is not None:
            identity = grant.confine(identity)
        agent = headers.get("user-agent")
        patterns = grant.scopes if grant is not None else ()
        caller = service.tools.caller(identity, "http", agent[:120] if agent else None, patterns)
        if grant is not None:  # a tool's own `scope` argument is held to them too (`scopes_of`)
            grant.check_scopes(caller.identity.scopes)
        scope[CALLER] = caller
        await service.manager.handle_request(scope, receive, send)


def mcp_routes(starter: McpStarter, store: AsyncStore) -> list[BaseRoute]:
    """`/mcp` and the tool-call listing; `scoped_mcp_route` is added apart (see create_app)."""
    return [Route("/mcp", open_to_clients(McpEndpoint(starter))), *audit_routes(store)]


def scoped_mcp_route(starter: McpStarter) -> BaseRoute:
    """`/scope/<scope>/mcp`, for clients that only let you set a URL."""
    return Route("/scope/{scope:path}/mcp", open_to_clients(McpEndpoint(starter)))
