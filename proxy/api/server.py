"""The API the CLI needs while the server holds the database: which home this server serves,
the store's invariants, a whole import, and a hard delete."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from beliefs.store.async_store import AsyncStore
from beliefs.store.belief_store import BeliefStore
from beliefs.store.interchange import parse
from beliefs.store.tallies import verify_report
from proxy.api.query_params import query_flag
from proxy.errors import ProxyError
from proxy.gateway.request_body import read_body
from proxy.settings import Settings


class HomeApi:
    """The routes' collaborators: the store, the settings (the home, the body limit) and what
    names the home (the id the CLI checks it is talking to its own home's server by)."""

    def __init__(
        self, store: AsyncStore, settings: Settings, home_id: Callable[[Path], str]
    ) -> None:
        self.store = store
        self.settings = settings
        self.home_id = home_id

    async def server_info(self, request: Request) -> Response:
        """The home this server serves (its id and path) and the server's process id."""
        home = self.settings.home
        return JSONResponse({"home_id": self.home_id(home), "home": str(home), "pid": os.getpid()})

    async def verify_store(self, request: Request) -> Response:
        """The store's invariants: no cycles, one live head per chain, unique live names."""
        return JSONResponse(await self.store.apply(verify_report))

    async def import_beliefs(self, request: Request) -> Response:
        """Body: beliefs as JSONL (one belief per line, every field) or Tenure's JSON array; all or
        nothing (400 naming the entry, its id and the field otherwise)."""
        raw = await read_body(request.scope, request.receive, self.settings.max_body_bytes)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ProxyError(
                400, "the import body is not UTF-8 text", code="invalid_value"
            ) from None
        beliefs = parse(text, source="the import body")
        count = await self.store.apply(BeliefStore.import_beliefs, beliefs)
        return JSONResponse({"imported": count})

    async def purge_belief(self, request: Request) -> Response:
        """Remove a belief's row for good (its history stays); `?hard=true` is required."""
        belief_id = request.path_params["belief_id"]
        if not query_flag(request.query_params, "hard"):
            raise ProxyError(400, "add ?hard=true: this removes the row for good", param="hard")
        belief = await self.store.get(belief_id)
        await self.store.apply(BeliefStore.hard_delete, belief_id)
        return JSONResponse({"deleted": belief.id, "canonical_name": belief.canonical_name})


def home_routes(
    store: AsyncStore, settings: Settings, home_id: Callable[[Path], str]
) -> list[BaseRoute]:
    """Mount before the API's catch-all."""
    home = HomeApi(store, settings, home_id)
    return [
        Route("/api/server", home.server_info, methods=["GET"]),
        Route("/api/verify", home.verify_store, methods=["GET"]),
        Route("/api/import", home.import_beliefs, methods=["POST"]),
        Route("/api/beliefs/{belief_id}/purge", home.purge_belief, methods=["POST"]),
    ]
