"""The memory tools over stdio (`tenure mcp`): served from the database, or relayed to the
running server's `/mcp` when that server holds the database (DuckDB allows one writer)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from beliefs.store.async_store import AsyncStore
from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from compaction import PersonaKeeper
from proxy.gateway.chat_commands import LOAD_SQL, ChatStates
from proxy.gateway.identity import header_text, resolve_identity
from proxy.gateway.tables import MIGRATIONS as GATEWAY_TABLES
from proxy.mcp.server import ToolServer
from proxy.mcp.tools import MemoryTools
from proxy.settings import Settings

log = logging.getLogger("tenure.mcp")

RELAY_AGENT = "tenure mcp (stdio relay)"


async def serve_stdio(settings: Settings, store: BeliefStore, headers: Mapping[str, str]) -> None:
    """Serve one stdio client from `store`; the caller is resolved from `headers` (the
    command's --user/--agent/--scope) exactly as the gateway resolves a request's."""
    thread = StoreThread(store)
    persona = PersonaKeeper(thread)
    chat_states = ChatStates()
    beliefs = AsyncStore(thread)
    await beliefs.apply(BeliefStore.ensure_schema, GATEWAY_TABLES)
    chat_states.load(await beliefs.apply(lambda s: s.execute(LOAD_SQL).fetchall()))
    tools = MemoryTools(settings, beliefs, persona, chat_states)
    identity = resolve_identity(
        {k.lower(): header_text(v.encode()) for k, v in headers.items()},
        {},
        url_scope=None,
        default_user=settings.default_user,
    )
    server = ToolServer(tools, caller=tools.caller(identity, "stdio", None))
    try:
        async with stdio_server() as (read, write):
            await server.server.run(read, write, server.server.create_initialization_options())
    finally:
        await persona.close()
        thread.close()


async def relay_stdio(settings: Settings, base: str, headers: Mapping[str, str]) -> None:
    """Pass every message between this process's stdio and the running server's `/mcp` at
    `base` (a server checked to serve this home)."""
    sent = {**headers, "User-Agent": RELAY_AGENT}
    if settings.api_key or settings.token:
        sent["Authorization"] = f"Bearer {settings.api_key or settings.token}"
    print(f"tenure mcp: relaying to {base}/mcp", file=sys.stderr)
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=sent, timeout=timeout) as http,
        streamable_http_client(f"{base}/mcp", http_client=http) as (remote_read, remote_write),
        stdio_server() as (local_read, local_write),
        anyio.create_task_group() as tasks,
    ):

        async def up() -> None:
            async for message in local_read:
                if isinstance(message, SessionMessage):
                    await remote_write.send(message)
            # The client closed stdin: we are done. The stdio server's writer waits for its
            # stream to close before it lets the process leave, so close it too.
            local_write.close()
            tasks.cancel_scope.cancel()

        async def down() -> None:
            async for message in remote_read:
                if isinstance(message, SessionMessage):
                    await local_write.send(message)
                else:
                    log.warning("the server's reply could not be relayed: %s", message)

        tasks.start_soon(up)
        tasks.start_soon(down)
