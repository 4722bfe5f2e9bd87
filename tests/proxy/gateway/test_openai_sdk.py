"""The official `openai` SDK through the gateway: unchanged replies, memory placed as specified."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest

from beliefs.model.models import Belief
from beliefs.model.rules import Rule
from beliefs.store.rule_store import create_rule
from tests.fakes.upstream import Chat, FakeUpstream
from tests.proxy import beliefs_seed as seed
from tests.proxy.conftest import BOTH_BACKENDS, Gateway

gateway_backend = BOTH_BACKENDS  # these tests run on DuckDB and on PostgreSQL

ALICE = {"X-Tenure-User": seed.USER, "X-Tenure-Scope": "domain:code"}
QUESTION = "Which pg version do we run?"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "run_sql",
            "description": "Run a query",
            "parameters": {"type": "object", "properties": {"sql": {"type": "string"}}},
        },
    }
]


@pytest.fixture
def gw(make_gateway: Callable[..., Gateway]) -> Gateway:
    return make_gateway(beliefs=seed.ALL, persona=seed.PERSONA)


def client(gw: Gateway) -> openai.OpenAI:
    return gw.openai()


def sent_messages(upstream: FakeUpstream) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = upstream.last("/chat/completions").json["messages"]
    return messages


def test_non_streaming_reply_is_byte_identical_and_memory_is_placed(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    raw = client(gw).chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": "You are a coding assistant."},
            {"role": "user", "content": "Earlier question about pg"},
            {"role": "assistant", "content": "Earlier answer."},
            {"role": "user", "content": QUESTION},
        ],
        extra_headers=ALICE,
    )
    completion = raw.parse()
    rec = upstream.last("/chat/completions")
    assert raw.http_response.content == bytes(rec.sent)
    assert completion.choices[0].message.content == "Hello from the stand-in provider."
    assert completion.model == "gpt-4o-mini"
    assert completion.usage is not None and completion.usage.total_tokens == 19
    assert raw.headers["x-tenure-request-id"].startswith("req_")
    injected = int(raw.headers["x-tenure-injected"])
    assert injected >= 2

    system, earlier, answer, last = rec.json["messages"]
    assert system["content"].startswith("You are a coding assistant.\n\n<tenure-memory")
    assert system["content"].endswith("</tenure-memory>")
    assert seed.PERSONA in system["content"] and "b-tabs" in system["content"]
    assert "b-postgres" not in system["content"]
    assert earlier == {"role": "user", "content": "Earlier question about pg"}
    assert answer == {"role": "assistant", "content": "Earlier answer."}
    assert last["content"].startswith(QUESTION + "\n\n<tenure-memory")
    assert "b-postgres" in last["content"] and "b-bob" not in last["content"]


def test_streaming_bytes_are_relayed_unchanged(gw: Gateway, upstream: FakeUpstream) -> None:
    body = {
        "model": "gpt-4o-mini",
        "stream": True,
        "messages": [{"role": "user", "content": QUESTION}],
    }
    with (
        httpx.Client() as http,
        http.stream("POST", gw.v1 + "/chat/completions", json=body, headers=ALICE) as resp,
    ):
        assert resp.headers["content-type"].startswith("text/event-stream")
        received = b"".join(resp.iter_bytes())
    sent = bytes(upstream.last("/chat/completions").sent)
    assert received == sent
    assert received.endswith(b"data: [DONE]\n\n")
    assert received.count(b"data: ") >= 6


def test_streaming_with_sdk_and_usage_chunk(gw: Gateway, upstream: FakeUpstream) -> None:
    stream = client(gw).chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        stream_options={"include_usage": True},
        extra_headers=ALICE,
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello from the stand-in provider."
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 19
    assert upstream.last("/chat/completions").json["stream_options"] == {"include_usage": True}


def test_async_client_streaming_and_not(gw: Gateway, upstream: FakeUpstream) -> None:
    async def run() -> tuple[str, str]:
        async with openai.AsyncOpenAI(base_url=gw.v1, api_key="sk", max_retries=0) as aclient:
            whole = await aclient.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": QUESTION}],
                extra_headers=ALICE,
            )
            stream = await aclient.chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": QUESTION}],
                stream=True,
                extra_headers=ALICE,
            )
            parts = [c.choices[0].delta.content or "" async for c in stream if c.choices]
            return whole.choices[0].message.content or "", "".join(parts)

    whole, streamed = asyncio.run(run())
    assert whole == streamed == "Hello from the stand-in provider."
    assert "b-postgres" in sent_messages(upstream)[-1]["content"]


@pytest.mark.parametrize("stream", [False, True])
def test_tools_and_tool_call_deltas_pass_through(
    gw: Gateway, upstream: FakeUpstream, stream: bool
) -> None:
    call = {"id": "call_1", "name": "run_sql", "arguments": '{"sql": "select version()"}'}
    upstream.queue(Chat(content="", tool_calls=[call]))
    kwargs: dict[str, Any] = {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": QUESTION}],
        "tools": TOOLS,
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "extra_headers": ALICE,
    }
    if stream:
        name, arguments = "", ""
        for chunk in client(gw).chat.completions.create(stream=True, **kwargs):
            for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
                name += (delta.function.name or "") if delta.function else ""
                arguments += (delta.function.arguments or "") if delta.function else ""
    else:
        message = client(gw).chat.completions.create(**kwargs).choices[0].message
        assert message.tool_calls is not None
        function = message.tool_calls[0].function  # type: ignore[union-attr]
        name, arguments = function.name, function.arguments
    assert (name, arguments) == ("run_sql", call["arguments"])
    got = upstream.last("/chat/completions").json
    assert got["tools"] == TOOLS and got["tool_choice"] == "auto"
    assert got["parallel_tool_calls"] is False
    # A reply that calls a tool is not the turn's end: its job comes with the final answer.
    gw.settle()
    assert gw.rows("SELECT turn FROM jobs") == []


def test_response_format_and_unknown_fields_pass_through(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    schema = {
        "type": "json_schema",
        "json_schema": {
            "name": "answer",
            "schema": {"type": "object", "properties": {"version": {"type": "string"}}},
            "strict": True,
        },
    }
    upstream.queue(Chat(content='{"version": "16"}'))
    completion = client(gw).chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": QUESTION},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                ],
            }
        ],
        response_format=schema,  # type: ignore[arg-type]
        logprobs=True,
        top_logprobs=2,
        seed=7,
        extra_body={"x_vendor_option": {"keep": [1, 2]}},
        extra_headers=ALICE,
    )
    assert json.loads(completion.choices[0].message.content or "") == {"version": "16"}
    got = upstream.last("/chat/completions").json
    assert got["response_format"] == schema
    assert (got["logprobs"], got["top_logprobs"], got["seed"]) == (True, 2, 7)
    assert got["x_vendor_option"] == {"keep": [1, 2]}
    parts = got["messages"][-1]["content"]
    assert parts[:2] == [
        {"type": "text", "text": QUESTION},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
    ]
    assert parts[2]["type"] == "text" and "b-postgres" in parts[2]["text"]


def test_system_content_parts_and_developer_role(gw: Gateway, upstream: FakeUpstream) -> None:
    system = [{"type": "text", "text": "Be precise.", "cache_control": {"type": "ephemeral"}}]
    client(gw).chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": system},  # type: ignore[misc,list-item]
            {"role": "user", "content": QUESTION},
        ],
        extra_headers=ALICE,
    )
    parts = sent_messages(upstream)[0]["content"]
    assert parts[0] == system[0]
    assert parts[1]["type"] == "text" and "b-tabs" in parts[1]["text"]

    client(gw).chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "developer", "content": "Dev rules."},
            {"role": "user", "content": QUESTION},
        ],
        extra_headers=ALICE,
    )
    first = sent_messages(upstream)[0]
    assert first["role"] == "developer"
    assert first["content"].startswith("Dev rules.\n\n<tenure-memory")


def test_system_message_added_when_missing(gw: Gateway, upstream: FakeUpstream) -> None:
    client(gw).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hello"}], extra_headers=ALICE
    )
    messages = sent_messages(upstream)
    assert messages[0]["role"] == "system"
    assert (
        messages[0]["content"].startswith("<tenure-memory") and "b-tabs" in messages[0]["content"]
    )
    assert messages[1] == {"role": "user", "content": "hello"}


def test_tool_result_turn_gets_the_same_memory_again_byte_for_byte(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    first = [{"role": "system", "content": "Sys."}, {"role": "user", "content": QUESTION}]
    client(gw).chat.completions.create(model="gpt-4o-mini", messages=first, extra_headers=ALICE)  # type: ignore[arg-type]
    system_then, typed_then = sent_messages(upstream)
    assert "PostgreSQL 16" in typed_then["content"]
    follow_up: list[Any] = [
        *first,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "run_sql", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "PostgreSQL 16.2"},
    ]
    raw = client(gw).chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=follow_up, tools=TOOLS, extra_headers=ALICE
    )
    sent = sent_messages(upstream)
    assert sent[:2] == [system_then, typed_then]  # the prefix the first request sent
    assert sent[2:] == follow_up[2:]
    assert raw.headers["x-tenure-injected"] == "2"  # the pinned belief and the relevant one


def test_namespace_rule_templates_shape_the_relevant_block(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=seed.ALL)
    rule = Rule(pattern="domain:code", template="(MEMORY) Code conventions:\n{{content}}")
    gw.on_store(lambda store: create_rule(store, rule))
    client(gw).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": QUESTION}], extra_headers=ALICE
    )
    last = sent_messages(upstream)[-1]["content"]
    assert "Code conventions:" in last and "b-postgres" in last


def test_a_repeated_request_sees_a_belief_written_in_between(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    client(gw).chat.completions.create(model="m", messages=messages, extra_headers=ALICE)
    assert "b-pgbouncer" not in sent_messages(upstream)[-1]["content"]
    pooler = Belief(
        id="b-pgbouncer",
        user_id=seed.USER,
        canonical_name="pgbouncer",
        aliases=["pg"],
        content="Connections go through PgBouncer.",
        scope=["domain:code"],
    )
    gw.on_store(lambda store: store.create(pooler))
    client(gw).chat.completions.create(model="m", messages=messages, extra_headers=ALICE)
    assert "b-pgbouncer" in sent_messages(upstream)[-1]["content"]


def test_query_string_goes_upstream_with_memory_placed(gw: Gateway, upstream: FakeUpstream) -> None:
    # Azure-style upstreams need `api-version` on every call.
    sdk = openai.OpenAI(
        base_url=gw.v1, api_key="sk-client", default_query={"api-version": "2024-06-01"}
    )
    sdk.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": QUESTION}],
        extra_headers=ALICE,
    )
    rec = upstream.last()
    assert rec.path == "/v1/chat/completions?api-version=2024-06-01"
    assert "<tenure-memory" in rec.json["messages"][-1]["content"]
