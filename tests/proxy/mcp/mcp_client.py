"""Driving the memory tools with the `mcp` SDK's own client, over streamable HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

T = TypeVar("T")
Mode = Literal["legacy", "auto"]


def with_tools(
    url: str,
    work: Callable[[Client], Awaitable[T]],
    *,
    headers: dict[str, str] | None = None,
    mode: Mode = "auto",
) -> T:
    """Connect to `url` (…/mcp) with `headers`, run `work(client)`, disconnect."""

    async def run() -> T:
        async with (
            httpx2.AsyncClient(headers=headers or {}, timeout=30) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode) as client,
        ):
            return await work(client)

    return asyncio.run(run())


def call(
    url: str,
    tool: str,
    arguments: dict[str, Any],
    *,
    headers: dict[str, str] | None = None,
    mode: Mode = "auto",
) -> tuple[bool, dict[str, Any]]:
    """One tool call: (is_error, structured result)."""

    async def work(client: Client) -> tuple[bool, dict[str, Any]]:
        result = await client.call_tool(tool, arguments)
        assert isinstance(result.structured_content, dict), result
        return result.is_error, result.structured_content

    return with_tools(url, work, headers=headers, mode=mode)
