"""`tenure mcp [--user] [--agent] [--scope]`: the memory tools for stdio MCP clients."""

from __future__ import annotations

import argparse
import asyncio

from beliefs.model.errors import StoreLocked
from proxy.cli.backend import open_store, server_for_home
from proxy.errors import ProxyError
from proxy.gateway.identity import parse_scopes
from proxy.settings import Settings, SettingsError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="serve the memory tools (recall, remember, forget) to an MCP client over stdio",
        description="Speak MCP on stdin/stdout. Uses the database directly, or the running "
        "server's /mcp when a server holds it. Identity as on the gateway: the flags act as "
        "the X-Tenure-User, X-Agent-Id and X-Tenure-Scope headers.",
    )
    parser.add_argument(
        "--user", help="the user whose memory to use (default: TENURE_DEFAULT_USER)"
    )
    parser.add_argument("--agent", help="the agent id, for beliefs only that agent may see")
    parser.add_argument("--scope", help="comma-separated scopes, e.g. domain:code,project:billing")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from proxy.mcp.stdio import relay_stdio, serve_stdio  # the SDK loads only for this command

    try:
        parse_scopes(args.scope or "", "--scope")
    except ProxyError as exc:
        raise SettingsError(exc.message) from None
    headers = {
        name: value
        for name, value in (
            ("X-Tenure-User", args.user),
            ("X-Agent-Id", args.agent),
            ("X-Tenure-Scope", args.scope),
        )
        if value
    }
    try:
        store = open_store(settings, create=True)  # an agent's own memory, like `serve`
    except StoreLocked as locked:
        server = server_for_home(settings, locked)  # only a server of this home, and says so
        asyncio.run(relay_stdio(settings, server.base, headers))
        return 0
    with store:
        asyncio.run(serve_stdio(settings, store, headers))
    return 0
