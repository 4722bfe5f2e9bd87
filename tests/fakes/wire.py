"""The replies the stand-in provider sends, in each wire format: OpenAI chat completions (JSON
and SSE chunks) and Anthropic messages (JSON and named SSE events)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.fakes.upstream import Chat

CREATED = 1_764_000_000
USAGE = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}


def openai_completion(chat: Chat, *, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": chat.content or None}
    if chat.tool_calls:
        message["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": call["arguments"]},
            }
            for call in chat.tool_calls
        ]
    return {
        "id": "chatcmpl-standin",
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if chat.tool_calls else "stop",
            }
        ],
        "usage": USAGE,
        "system_fingerprint": "fp_standin",
    }


def _sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def openai_events(chat: Chat, *, model: str, include_usage: bool) -> list[bytes]:
    base = {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": CREATED}
    base["model"] = model
    extra: dict[str, Any] = {"usage": None} if include_usage else {}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _sse({**base, "choices": [choice], **extra})

    events = [chunk({"role": "assistant", "content": ""})]
    words = chat.content.split(" ") if chat.content else []
    for i, word in enumerate(words):
        events.append(chunk({"content": word if i == 0 else " " + word}))
    for index, call in enumerate(chat.tool_calls):
        head = {"index": index, "id": call["id"], "type": "function"}
        head["function"] = {"name": call["name"], "arguments": ""}
        events.append(chunk({"tool_calls": [head]}))
        arguments = call["arguments"]
        middle = len(arguments) // 2
        for part in (arguments[:middle], arguments[middle:]):
            events.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
            )
    events.append(chunk({}, "tool_calls" if chat.tool_calls else "stop"))
    if include_usage:
        events.append(_sse({**base, "choices": [], "usage": USAGE}))
    events.append(b"data: [DONE]\n\n")
    return events


def anthropic_message(chat: Chat, *, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if chat.content:
        content.append({"type": "text", "text": chat.content})
    for call in chat.tool_calls:
        content.append(
            {
                "type": "tool_use",
                "id": call["id"],
                "name": call["name"],
                "input": json.loads(call["arguments"] or "{}"),
            }
        )
    return {
        "id": "msg_standin",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if chat.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 7, **chat.usage},
    }


def _event(name: str, payload: dict[str, Any]) -> bytes:
    return f"event: {name}\n".encode() + _sse(payload)


def anthropic_events(chat: Chat, *, model: str) -> list[bytes]:
    start = anthropic_message(replace(chat, content="", tool_calls=[]), model=model)
    start.update(content=[], stop_reason=None, usage={**start["usage"], "output_tokens": 1})
    events = [
        _event("message_start", {"type": "message_start", "message": start}),
        _event("ping", {"type": "ping"}),
    ]
    index = 0
    if chat.content:
        block = {"type": "text", "text": ""}
        events.append(
            _event(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": block},
            )
        )
        for i, word in enumerate(chat.content.split(" ")):
            delta = {"type": "text_delta", "text": word if i == 0 else " " + word}
            events.append(
                _event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": 0, "delta": delta},
                )
            )
        events.append(_event("content_block_stop", {"type": "content_block_stop", "index": 0}))
        index = 1
    for call in chat.tool_calls:
        block = {"type": "tool_use", "id": call["id"], "name": call["name"], "input": {}}
        events.append(
            _event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )
        )
        arguments = call["arguments"]
        middle = len(arguments) // 2
        for part in (arguments[:middle], arguments[middle:]):
            delta = {"type": "input_json_delta", "partial_json": part}
            events.append(
                _event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    stop = "tool_use" if chat.tool_calls else "end_turn"
    events.append(
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 7},
            },
        )
    )
    events.append(_event("message_stop", {"type": "message_stop"}))
    return events
