"""Reading the assistant turn back from captured bytes: both formats, JSON and SSE."""

from __future__ import annotations

import gzip
import json

import pytest

from proxy.gateway.protocols.anthropic_messages import ANTHROPIC_MESSAGES
from proxy.gateway.protocols.chat_completions import CHAT_COMPLETIONS
from proxy.gateway.turns import read_reply
from tests.fakes.upstream import (
    Chat,
    anthropic_events,
    anthropic_message,
    openai_completion,
    openai_events,
)

CALL = {"id": "c1", "name": "lookup", "arguments": '{"q": "pg"}'}
CHAT = Chat(content="Use PostgreSQL 16.", tool_calls=[CALL])
EXPECTED_CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "lookup", "arguments": '{"q": "pg"}'},
}
JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream"


def test_openai_json_and_sse() -> None:
    body = json.dumps(openai_completion(CHAT, model="m")).encode()
    for chunks, content_type in (
        ([body[:10], body[10:]], JSON_TYPE),
        (openai_events(CHAT, model="m", include_usage=True), SSE_TYPE),
    ):
        turn = read_reply(CHAT_COMPLETIONS, chunks, content_type=content_type)
        assert turn.text == "Use PostgreSQL 16."
        assert turn.tool_calls == [EXPECTED_CALL]


def test_anthropic_json_and_sse() -> None:
    body = json.dumps(anthropic_message(CHAT, model="m")).encode()
    turn = read_reply(ANTHROPIC_MESSAGES, [body], content_type=JSON_TYPE)
    assert turn.text == "Use PostgreSQL 16."
    assert json.loads(turn.tool_calls[0]["function"]["arguments"]) == {"q": "pg"}
    turn = read_reply(ANTHROPIC_MESSAGES, anthropic_events(CHAT, model="m"), content_type=SSE_TYPE)
    assert (turn.text, turn.tool_calls) == ("Use PostgreSQL 16.", [EXPECTED_CALL])


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_stream_cut_short_keeps_what_arrived(wire: str) -> None:
    events = (
        openai_events(CHAT, model="m", include_usage=False)
        if wire == "openai"
        else anthropic_events(CHAT, model="m")
    )
    raw = b"".join(events[:4])
    raw += events[4][:15]  # a torn event
    protocol = CHAT_COMPLETIONS if wire == "openai" else ANTHROPIC_MESSAGES
    turn = read_reply(protocol, [raw], content_type=SSE_TYPE)
    assert turn.text and "Use PostgreSQL 16.".startswith(turn.text)


def test_gzip_body_and_garbage() -> None:
    body = gzip.compress(json.dumps(openai_completion(CHAT, model="m")).encode())
    turn = read_reply(CHAT_COMPLETIONS, [body], content_type=JSON_TYPE, content_encoding="gzip")
    assert turn.text == "Use PostgreSQL 16."
    assert read_reply(CHAT_COMPLETIONS, [b"<html>"], content_type="text/html").empty


def test_a_torn_or_foreign_event_mid_stream_costs_only_itself() -> None:
    """Events are parsed together when they all parse; one that does not (torn, not JSON, a
    value that is not an object, one event's data over two `data:` lines) is handled alone."""
    words = ["Use ", "Postgre", "SQL ", "16."]
    events = [
        b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": w}}]}).encode()
        for w in words
    ]
    split = json.dumps({"choices": [{"index": 0, "delta": {"content": "!"}}]}).encode()
    stream = [
        b": keep-alive comment\n\n",
        events[0] + b"\n\n",
        b'data: {"choices": [{"index": 0, "delta": {"content": "lost\n\n',  # torn
        events[1] + b"\n\n",
        b"data: not json at all\n\n",
        events[2] + b"\r\n\r\n",
        b"data: [1, 2]\n\n",  # JSON, but not an event object
        events[3] + b"\n\n",
        b"data: " + split[:12] + b"\ndata: " + split[12:] + b"\n\n",  # after `{"choices": `
        b"data: [DONE]\n\n",
    ]
    assert read_reply(CHAT_COMPLETIONS, stream, content_type=SSE_TYPE).text == "Use PostgreSQL 16.!"
    clean = [e + b"\n\n" for e in events] + [b"data: [DONE]\n\n"]
    assert read_reply(CHAT_COMPLETIONS, clean, content_type=SSE_TYPE).text == "Use PostgreSQL 16."
