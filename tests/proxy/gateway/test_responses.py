"""The Responses API through the gateway: memory placed, the turn extracted, controls kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from proxy.gateway.protocols.responses import RESPONSES
from proxy.gateway.turns import read_reply
from tests.fakes.responses import response_events
from tests.fakes.upstream import Chat, FakeUpstream, Raw
from tests.proxy import beliefs_seed as seed
from tests.proxy.conftest import Gateway, no_request_to
from tests.proxy.gateway.gateway_reads import injections, pending_turns

ALICE = {"X-Tenure-User": "alice", "X-Tenure-Scope": "domain:code"}
QUESTION = "Which database should the billing service use, pg or mysql?"


@pytest.fixture
def gw(make_gateway: Callable[..., Gateway]) -> Gateway:
    return make_gateway(beliefs=seed.ALL)


def post(
    gw: Gateway, body: dict[str, Any], headers: dict[str, str] | None = None, timeout: float = 10
) -> httpx.Response:
    return httpx.post(
        gw.v1 + "/responses",
        json={"model": "gpt-4o-mini", **body},
        headers=ALICE if headers is None else headers,
        timeout=timeout,
    )


def test_a_string_input_gets_memory_in_instructions_and_at_its_end(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    resp = post(gw, {"instructions": "Be brief.", "input": QUESTION})
    assert resp.status_code == 200, resp.text
    assert resp.json()["output"][0]["content"][0]["text"] == "Hello from the stand-in provider."
    sent = upstream.last("/responses").json
    assert sent["instructions"].startswith("Be brief.\n\n<tenure-memory")
    assert "Indents code with tabs." in sent["instructions"]  # pinned
    assert sent["input"].startswith(QUESTION + "\n\n<tenure-memory")
    assert "PostgreSQL 16" in sent["input"]  # relevant
    assert resp.headers["x-tenure-injected"] == "2"
    gw.settle(lambda: len(injections(gw)) == 1)
    [record] = injections(gw)
    assert record["endpoint"] == "responses"
    assert record["layers"] == {"pinned": ["b-tabs"], "relevant": ["b-postgres"]}
    assert record["request_id"] == resp.headers["x-tenure-request-id"]


def test_an_item_list_gets_memory_in_its_last_user_message_others_untouched(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "D"}]},
        {"role": "user", "content": "earlier question"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "A"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": QUESTION}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"},
    ]
    assert post(gw, {"input": items}).status_code == 200
    sent = upstream.last("/responses").json["input"]
    assert sent[:3] == items[:3] and sent[4] == items[4]
    parts = sent[3]["content"]
    assert parts[0] == {"type": "input_text", "text": QUESTION}
    assert parts[1]["type"] == "input_text" and "PostgreSQL 16" in parts[1]["text"]


def test_a_tool_output_request_gets_its_turns_memory_again_byte_for_byte(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    first: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    post(gw, {"instructions": "Be brief.", "input": first})
    before = upstream.last("/responses").json
    call = {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "42 rows"}
    resp = post(gw, {"instructions": "Be brief.", "input": [*first, call, output]})
    sent = upstream.last("/responses").json
    assert sent["instructions"] == before["instructions"]  # byte-stable: the cached prefix holds
    assert "PostgreSQL 16" in json.dumps(before["input"])
    assert sent["input"] == [*before["input"], call, output]
    assert resp.headers["x-tenure-injected"] == "2"  # the pinned belief and the relevant one


def test_a_chained_request_retrieves_from_its_new_items(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    body = {
        "previous_response_id": "resp_earlier",
        "input": [{"role": "user", "content": QUESTION}],
    }
    post(gw, body)
    sent = upstream.last("/responses").json
    assert sent["previous_response_id"] == "resp_earlier"
    assert "PostgreSQL 16" in json.dumps(sent["input"])


def test_the_sdk_streams_through_and_the_turn_with_its_calls_is_extracted_at_its_end(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    upstream.queue(
        Chat(
            content="Let me look that up.",
            tool_calls=[{"id": "call_9", "name": "search", "arguments": '{"q": "pg"}'}],
        ),
        Chat(content="Use PostgreSQL 16."),
    )
    client = gw.openai()
    with client.responses.stream(
        model="gpt-4o-mini", input=QUESTION, extra_headers=ALICE
    ) as stream:
        first = stream.get_final_response()
    assert first.output_text == "Let me look that up."
    assert upstream.last("/responses").json["stream"] is True
    gw.settle()
    assert pending_turns(gw) == []  # the reply called a tool: the turn goes on
    call = {"type": "function_call", "call_id": "call_9", "name": "search", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "call_9", "output": "pg 16"}
    items: list[Any] = [{"role": "user", "content": QUESTION}, call, output]
    with client.responses.stream(model="gpt-4o-mini", input=items, extra_headers=ALICE) as stream:
        assert stream.get_final_response().output_text == "Use PostgreSQL 16."
    gw.settle(lambda: len(pending_turns(gw)) == 1)
    [turn] = pending_turns(gw)
    assert turn["user_message"] == QUESTION
    assert turn["assistant_message"] == "Use PostgreSQL 16."
    assert turn["tool_calls"] == [{"type": "function", "function": {"name": "search"}}]
    assert (turn["user_id"], turn["wire"], turn["model"]) == ("alice", "openai", "gpt-4o-mini")
    assert sorted(turn["injected_ids"]) == ["b-postgres", "b-tabs"]


def test_a_stream_the_client_cut_short_still_hands_over_what_arrived(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    words = "one two three four five six seven eight nine ten"
    upstream.queue(Chat(content=words, chunk_delay=0.15))
    body = {"model": "gpt-4o-mini", "input": "Count to ten for me", "stream": True}
    with httpx.stream("POST", gw.v1 + "/responses", json=body, headers=ALICE, timeout=10) as resp:
        seen = b""
        for chunk in resp.iter_bytes():
            seen += chunk
            if b'"delta": "one"' in seen:
                break  # the client hangs up mid-stream
    upstream.hung_up.wait(5)
    gw.settle(lambda: len(pending_turns(gw)) == 1)
    [turn] = pending_turns(gw)
    assert turn["user_message"] == "Count to ten for me"
    assert turn["assistant_message"].startswith("one")
    assert turn["assistant_message"] != words


def test_identity_metadata_and_controls_work_as_on_chat_completions(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    body = {
        "input": QUESTION,
        "metadata": {"tenure_user": "alice", "tenure_scope": "domain:code", "run": "r1"},
    }
    resp = post(gw, body, headers={})
    assert resp.headers["x-tenure-injected"] == "2"
    assert upstream.last("/responses").json["metadata"] == {"run": "r1"}
    incognito = {**ALICE, "X-Tenure-Incognito": "1"}
    resp = post(gw, {"input": QUESTION}, headers=incognito)
    assert resp.headers["x-tenure-injected"] == "0"
    assert upstream.last("/responses").json["input"] == QUESTION
    gw.settle()
    assert len(pending_turns(gw)) == 1 and len(injections(gw)) == 1  # the first request only


@pytest.mark.parametrize("stream", [False, True])
def test_chat_commands_answer_without_the_upstream(
    gw: Gateway, upstream: FakeUpstream, stream: bool
) -> None:
    client = gw.openai()
    with no_request_to(upstream):
        if stream:
            with client.responses.stream(
                model="gpt-4o-mini", input="!inject off", extra_headers=ALICE
            ) as events:
                text = events.get_final_response().output_text
        else:
            text = client.responses.create(
                model="gpt-4o-mini",
                input=[{"role": "user", "content": "!inject off"}],
                extra_headers=ALICE,
            ).output_text
    assert text == "Tenure: memory injection is now off for this chat."
    post(gw, {"input": QUESTION})
    assert upstream.last("/responses").json["input"] == QUESTION
    post(gw, {"input": "!inject on"})


def test_replayed_memory_is_removed_before_it_is_placed_again(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    post(gw, {"instructions": "Be brief.", "input": QUESTION})
    first = upstream.last("/responses").json
    post(gw, {"instructions": first["instructions"], "input": first["input"]})
    again = upstream.last("/responses").json
    assert again["instructions"] == first["instructions"]
    assert again["input"] == first["input"]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"input": 5}, "input"),
        ({"input": ["text"]}, "input[0]"),
        ({"instructions": ["x"]}, "instructions"),
        ({"model": 3}, "model"),
    ],
)
def test_bad_fields_are_named(gw: Gateway, body: dict[str, Any], param: str) -> None:
    resp = post(gw, body)
    assert resp.status_code == 400
    assert resp.json()["error"]["param"] == param


def test_upstream_errors_come_back_as_sent_and_leave_no_job(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    upstream.queue(Raw(status=429, body=b'{"error": {"message": "slow down"}}'))
    resp = post(gw, {"input": QUESTION})
    assert resp.status_code == 429 and resp.json()["error"]["message"] == "slow down"
    gw.settle()
    assert pending_turns(gw) == [] and injections(gw) == []


def test_a_routed_model_answers_through_litellm(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    route = {"litellm_model": "anthropic/claude-x", "api_base": upstream.base, "api_key": "ak"}
    gw = make_gateway(beliefs=seed.ALL, models={"claude-x": route})
    resp = post(gw, {"model": "claude-x", "input": QUESTION}, timeout=60)  # imports LiteLLM
    assert resp.status_code == 200, resp.text
    payload = resp.json()
    assert payload["model"] == "claude-x"
    assert "Hello from the stand-in provider." in json.dumps(payload["output"])
    sent = upstream.last("/messages").json
    assert "PostgreSQL 16" in json.dumps(sent["messages"])
    gw.settle(lambda: len(pending_turns(gw)) == 1)
    assert pending_turns(gw)[0]["assistant_message"] == "Hello from the stand-in provider."


def test_a_cut_stream_yields_the_text_and_the_partial_call_that_arrived() -> None:
    chat = Chat(
        content="Checking now", tool_calls=[{"id": "c1", "name": "grep", "arguments": '{"p": "x"}'}]
    )
    events = response_events(chat, body={"model": "m"})
    cut = [e for e in events if b"response.completed" not in e and b"arguments.done" not in e]
    cut = [e for e in cut if not (b"output_item.done" in e and b"function_call" in e)]
    turn = read_reply(RESPONSES, cut, content_type="text/event-stream")
    assert turn.text == "Checking now"
    assert turn.tool_calls == [
        {"id": "c1", "type": "function", "function": {"name": "grep", "arguments": '{"p": "x"}'}}
    ]
    whole = read_reply(RESPONSES, events, content_type="text/event-stream")
    assert (whole.text, whole.tool_calls) == (turn.text, turn.tool_calls)
    torn = read_reply(RESPONSES, [*events[:5], events[5][:20]], content_type="text/event-stream")
    assert torn.text == "Checking"


def test_a_custom_tool_call_is_a_call_whole_or_cut_short() -> None:
    # Codex's `exec` takes free text: a reply made of it is not the turn's final answer.
    chat = Chat(content="", tool_calls=[{"id": "c1", "name": "exec", "input": "text(1);"}])
    events = response_events(chat, body={"model": "m"})
    call = {"id": "c1", "type": "function", "function": {"name": "exec", "arguments": "text(1);"}}
    whole = read_reply(RESPONSES, events, content_type="text/event-stream")
    assert whole.tool_calls == [call]
    cut = [e for e in events if b"completed" not in e and b"input.done" not in e]
    cut = [e for e in cut if b"output_item.done" not in e]
    assert read_reply(RESPONSES, cut, content_type="text/event-stream").tool_calls == [call]
