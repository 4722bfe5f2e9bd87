"""`tenure mcp`: the memory tools over stdio, driven with the `mcp` SDK's stdio client, on the
database directly and relayed to a running server that holds it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from beliefs.model.models import Belief
from beliefs.opening import open_store
from proxy.cli.home_record import write_server
from tests.proxy.conftest import Gateway
from tests.proxy.mcp.mcp_client import Mode


def tenure_mcp(home: Path, *args: str, port: int | None = None) -> StdioServerParameters:
    env = {**os.environ, "TENURE_HOME": str(home), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    if port is not None:
        env["TENURE_PORT"] = str(port)
    return StdioServerParameters(
        command=sys.executable, args=["-m", "proxy.cli.main", "mcp", *args], env=env
    )


def session(
    params: StdioServerParameters, calls: list[tuple[str, dict[str, Any]]], mode: Mode
) -> tuple[list[str], list[tuple[bool, dict[str, Any]]]]:
    """Tool names, then (is_error, result) of each call, in one stdio session."""

    async def run() -> tuple[list[str], list[tuple[bool, dict[str, Any]]]]:
        async with Client(params, mode=mode) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            results = []
            for tool, arguments in calls:
                result = await client.call_tool(tool, arguments)
                assert isinstance(result.structured_content, dict)
                results.append((result.is_error, result.structured_content))
            return names, results

    return asyncio.run(run())


REMEMBER = ("remember", {"statement": "Invoices go out on the 1st.", "aliases": ["invoices"]})


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_stdio_serves_the_tools_from_the_database(tmp_path: Path, mode: Mode) -> None:
    home = tmp_path / "home"
    with open_store(home / "tenure.duckdb") as store:
        hidden = store.create(
            Belief(
                user_id="alice",
                canonical_name="escalation_contacts",
                aliases=["escalation"],
                content="Escalate billing incidents to the finance on-call.",
                scope=["project:billing"],
                delivery="on_demand",
            )
        )
    params = tenure_mcp(home, "--user", "alice", "--scope", "project:billing")

    names, results = session(
        params,
        [
            ("recall", {"query": "escalation"}),
            REMEMBER,
            ("recall", {"query": "invoices"}),
            REMEMBER,
            ("recall", {"query": "x", "limit": 0}),
        ],
        mode,
    )

    assert names == ["recall", "remember", "forget", "beliefs", "open_questions", "sources"]
    (_, on_demand), (_, made), (_, found), (_, again), (failed, bad) = results
    assert [(h["id"], h["tags"]) for h in on_demand["hits"]] == [(hidden.id, ["on_demand"])]
    assert made["action"] == "created" and [h["id"] for h in found["hits"]] == [made["id"]]
    assert (again["action"], again["id"], again["reinforcement_count"]) == (
        "reinforced",
        made["id"],
        2,
    )
    assert failed and bad["error"]["field"] == "limit"
    with open_store(home / "tenure.duckdb") as store:
        stored = store.get(made["id"])
        rows = store.execute("SELECT tool, transport, user_id, ok FROM mcp_calls").fetchall()
    assert (stored.source_type, stored.scope) == ("mcp", ["project:billing"])
    assert sorted(rows) == sorted(
        [
            ("recall", "stdio", "alice", True),
            ("remember", "stdio", "alice", True),
            ("recall", "stdio", "alice", True),
            ("remember", "stdio", "alice", True),
            ("recall", "stdio", "alice", False),
        ]
    )


def test_stdio_relays_to_the_server_that_holds_the_database(
    make_gateway: Callable[..., Gateway],
) -> None:
    gateway = make_gateway()
    # what `tenure serve` records in the home: the relay uses only a server of its own home
    write_server(gateway.settings.home, f"http://127.0.0.1:{gateway.port}")
    params = tenure_mcp(gateway.settings.home, "--user", "bob", port=gateway.port)

    _, [(failed, made)] = session(params, [REMEMBER], "auto")

    assert not failed and made["action"] == "created"
    stored = gateway.on_store(lambda s: s.get(made["id"]))
    assert (stored.user_id, stored.source_type) == ("bob", "mcp")
    assert gateway.rows("SELECT tool, user_id, client FROM mcp_calls") == [
        ("remember", "bob", "tenure mcp (stdio relay)")
    ]


def test_the_relay_exits_when_its_client_closes_stdin(
    make_gateway: Callable[..., Gateway],
) -> None:
    gateway = make_gateway()
    write_server(gateway.settings.home, f"http://127.0.0.1:{gateway.port}")
    params = tenure_mcp(gateway.settings.home, port=gateway.port)
    with subprocess.Popen(
        [params.command, *params.args],
        env=params.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as relay:
        try:
            assert relay.stderr is not None and relay.stdin is not None
            while b"relaying to" not in (line := relay.stderr.readline()):
                assert line, "the relay ended before relaying"
            relay.stdin.close()
            assert relay.wait(timeout=120) == 0  # a bound for a hang, not a margin
        finally:
            if relay.poll() is None:
                relay.kill()
