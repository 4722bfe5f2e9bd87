"""Holding Tenure's own routes while the index fills at start-up (proxy calls never wait)."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from proxy.runtime import wait_loaded

# Answered at once while loading: the health check says `loading: true`.
UNGATED = frozenset({"/healthz"})


class LoadingGate:
    """Waits for the store's index before an API, UI or MCP request runs.

    Those handlers read the index on the event loop; reached while the loader thread holds it
    they would stall the loop, and with it every proxied request and `/healthz`. Proxy paths
    never get here (the gateway middleware hands them straight to the proxy).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in UNGATED:
            runtime = getattr(scope["app"].state, "runtime", None)
            if runtime is not None:
                await wait_loaded(runtime.store)
        await self.app(scope, receive, send)
