"""The official `anthropic` SDK through the gateway's `/v1/messages`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anthropic
import httpx
import pytest

from tests.fakes.upstream import Chat, FakeUpstream
from tests.proxy import beliefs_seed as seed
from tests.proxy.conftest import Gateway

ALICE = {"X-Tenure-User": seed.USER, "X-Tenure-Scope": "domain:code"}
QUESTION = "Which pg version do we run?"


@pytest.fixture
def gw(make_gateway: Callable[..., Gateway]) -> Gateway:
    return make_gateway(beliefs=seed.ALL, persona=seed.PERSONA)


def client(gw: Gateway) -> anthropic.Anthropic:
    # The SDK appends /v1/messages to its base URL.
    return gw.anthropic()


def test_message_is_relayed_and_memory_placed(gw: Gateway, upstream: FakeUpstream) -> None:
    raw = client(gw).messages.with_raw_response.create(
        model="claude-sonnet-4",
        max_tokens=100,
        system="You are terse.",
        messages=[{"role": "user", "content": QUESTION}],
        extra_headers={**ALICE, "anthropic-beta": "prompt-caching-2024-07-31"},
    )
    message = raw.parse()
    rec = upstream.last("/messages")
    assert rec.path == "/v1/messages"
    assert raw.http_response.content == bytes(rec.sent)
    assert message.content[0].text == "Hello from the stand-in provider."  # type: ignore[union-attr]
    # The client's own credential goes upstream (this SDK version sends it as a bearer token).
    credential = rec.headers.get("x-api-key") or rec.headers.get("authorization", "")
    assert credential.endswith("sk-ant-client")
    assert rec.headers["anthropic-version"] and rec.headers["anthropic-beta"]
    body = rec.json
    assert body["system"].startswith("You are terse.\n\n<tenure-memory")
    assert "b-tabs" in body["system"] and seed.PERSONA in body["system"]
    assert body["messages"][-1]["content"].startswith(QUESTION + "\n\n<tenure-memory")
    assert "b-postgres" in body["messages"][-1]["content"]
    assert int(raw.headers["x-tenure-injected"]) >= 2


def test_stream_events_and_pings_relayed_unchanged(gw: Gateway, upstream: FakeUpstream) -> None:
    with client(gw).messages.stream(
        model="claude-sonnet-4",
        max_tokens=100,
        messages=[{"role": "user", "content": QUESTION}],
        extra_headers=ALICE,
    ) as stream:
        text = "".join(stream.text_stream)
    assert text == "Hello from the stand-in provider."

    body = {
        "model": "claude-sonnet-4",
        "max_tokens": 50,
        "stream": True,
        "messages": [{"role": "user", "content": QUESTION}],
    }
    with (
        httpx.Client() as http,
        http.stream("POST", gw.v1 + "/messages", json=body, headers=ALICE) as resp,
    ):
        received = b"".join(resp.iter_bytes())
    assert received == bytes(upstream.last("/messages").sent)
    assert b"event: ping" in received and received.rstrip().endswith(b'{"type": "message_stop"}')


def test_system_blocks_keep_cache_control(gw: Gateway, upstream: FakeUpstream) -> None:
    system = [{"type": "text", "text": "Rules.", "cache_control": {"type": "ephemeral"}}]
    client(gw).messages.create(
        model="claude-sonnet-4",
        max_tokens=10,
        system=system,  # type: ignore[arg-type]
        messages=[{"role": "user", "content": [{"type": "text", "text": QUESTION}]}],
        extra_headers=ALICE,
    )
    body = upstream.last("/messages").json
    assert body["system"][0] == system[0]
    assert body["system"][1]["type"] == "text" and "b-tabs" in body["system"][1]["text"]
    content = body["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": QUESTION}
    assert "b-postgres" in content[1]["text"]


def test_tool_use_and_tool_result_turn(gw: Gateway, upstream: FakeUpstream) -> None:
    call = {"id": "toolu_1", "name": "run_sql", "arguments": '{"sql": "select 1"}'}
    upstream.queue(Chat(content="Let me check.", tool_calls=[call]))
    tools: list[Any] = [
        {"name": "run_sql", "description": "Run SQL", "input_schema": {"type": "object"}}
    ]
    first: list[Any] = [{"role": "user", "content": QUESTION}]
    with client(gw).messages.stream(
        model="claude-sonnet-4", max_tokens=100, tools=tools, messages=first, extra_headers=ALICE
    ) as stream:
        final = stream.get_final_message()
    tool_use = next(b for b in final.content if b.type == "tool_use")
    assert tool_use.input == {"sql": "select 1"}  # type: ignore[union-attr]
    system_then = upstream.last("/messages").json["system"]
    typed_then = upstream.last("/messages").json["messages"][0]
    assert "PostgreSQL 16" in json.dumps(typed_then)  # the turn's relevant block

    follow_up: list[Any] = [
        *first,
        {"role": "assistant", "content": [b.model_dump() for b in final.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "1"}],
        },
    ]
    client(gw).messages.create(
        model="claude-sonnet-4",
        max_tokens=100,
        tools=tools,
        messages=follow_up,
        extra_headers=ALICE,
    )
    body = upstream.last("/messages").json
    assert body["system"] == system_then
    assert body["messages"][0] == typed_then  # the same block again, byte for byte
    assert body["messages"][1:] == json.loads(json.dumps(follow_up[1:]))
    gw.settle()
    # One job for the typed message, written with the final answer; the loop's call by name.
    [(raw,)] = gw.rows("SELECT turn FROM jobs")
    turn = json.loads(raw)
    assert turn["user_message"] == QUESTION
    assert turn["assistant_message"] == "Hello from the stand-in provider."
    assert turn["tool_calls"] == [{"type": "function", "function": {"name": "run_sql"}}]


def test_query_string_goes_upstream(gw: Gateway, upstream: FakeUpstream) -> None:
    client(gw).messages.create(
        model="claude-sonnet-4",
        max_tokens=100,
        messages=[{"role": "user", "content": QUESTION}],
        extra_headers=ALICE,
        extra_query={"beta": "true"},
    )
    rec = upstream.last()
    assert rec.path == "/v1/messages?beta=true"
    assert "<tenure-memory" in str(rec.json["messages"][-1]["content"])
