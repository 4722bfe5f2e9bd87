"""The Responses API's reply, both ways: the assistant turn read back out of a relayed reply
(JSON or SSE, a stream cut short included), and the replies the gateway writes itself (chat
command answers) as a `response` object or its event stream."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from proxy.gateway.assistant_turn import function_call, named_sse

ToolCall = dict[str, Any]

# Output items that call a tool the client runs (it comes back with the `*_output` item), and
# the field holding what the model passed: a function's JSON arguments, a custom tool's free
# text (Codex's `exec`). A reply ending in one is not the turn's final answer.
CLIENT_CALLS = {"function_call": "arguments", "custom_tool_call": "input"}
_INPUT_DELTAS = ("response.function_call_arguments.delta", "response.custom_tool_call_input.delta")


def _call(item: dict[str, Any], arguments: str | None = None) -> ToolCall:
    """A client tool call item in the OpenAI tool-call shape the extractor reads."""
    raw = item.get(CLIENT_CALLS[item["type"]]) if arguments is None else arguments
    call_id = str(item.get("call_id") or item.get("id") or "")
    return function_call(call_id, str(item.get("name") or ""), str(raw or ""))


def _message_text(item: dict[str, Any]) -> str:
    return "".join(
        part["text"]
        for part in item.get("content") or []
        if isinstance(part, dict)
        and part.get("type") == "output_text"
        and isinstance(part.get("text"), str)
    )


def output_turn(output: Any) -> tuple[str, list[ToolCall]]:
    """Visible text and client tool calls of a response's `output` items (reasoning skipped)."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for item in output if isinstance(output, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            texts.append(_message_text(item))
        elif item.get("type") in CLIENT_CALLS:
            calls.append(_call(item))
    return "".join(texts), calls


def stream_turn(events: Iterable[dict[str, Any]]) -> tuple[str, list[ToolCall]]:
    """The turn from SSE payloads: `response.completed` when it came, else what the deltas and
    finished items carried before the stream stopped."""
    items: dict[int, dict[str, Any]] = {}
    texts: dict[int, list[str]] = {}
    arguments: dict[int, list[str]] = {}
    done: dict[int, dict[str, Any]] = {}
    for event in events:
        kind = event.get("type")
        if kind in ("response.completed", "response.incomplete"):
            response = event.get("response")
            if isinstance(response, dict) and response.get("output"):
                return output_turn(response["output"])
        index = event.get("output_index")
        if not isinstance(index, int):
            continue
        item = event.get("item")
        if kind == "response.output_item.added" and isinstance(item, dict):
            items[index] = item
        elif kind == "response.output_item.done" and isinstance(item, dict):
            done[index] = item
        elif kind == "response.output_text.delta" and isinstance(event.get("delta"), str):
            texts.setdefault(index, []).append(event["delta"])
        elif kind in _INPUT_DELTAS:
            arguments.setdefault(index, []).append(str(event.get("delta") or ""))
    text: list[str] = []
    calls: list[ToolCall] = []
    for index in sorted({*items, *done, *texts}):
        item = done.get(index) or items.get(index) or {"type": "message"}
        if item.get("type") in CLIENT_CALLS:
            calls.append(_call(item, None if index in done else "".join(arguments.get(index, []))))
        elif item.get("type") == "message":
            text.append(_message_text(item) if index in done else "".join(texts.get(index, [])))
    return "".join(text), calls


# -- replies the gateway writes itself ---------------------------------------------------------


def response_object(text: str, *, model: str, request_id: str) -> dict[str, Any]:
    """A completed `response` with one assistant message."""
    return {
        "id": f"resp_{request_id}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "model": model,
        "output": [
            {
                "id": f"msg_{request_id}",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 0,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 0,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 0,
        },
    }


def response_reply(text: str, *, model: str, request_id: str) -> bytes:
    return json.dumps(response_object(text, model=model, request_id=request_id)).encode()


def response_events(text: str, *, model: str, request_id: str) -> list[bytes]:
    """The event stream of the same reply, `response.created` to `response.completed`."""
    final = response_object(text, model=model, request_id=request_id)
    message = final["output"][0]
    started = {**final, "status": "in_progress", "output": [], "usage": None}
    where = {"item_id": message["id"], "output_index": 0, "content_index": 0}
    part = message["content"][0]
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": started},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**message, "status": "in_progress", "content": []},
        },
        {"type": "response.content_part.added", **where, "part": {**part, "text": ""}},
        {"type": "response.output_text.delta", **where, "delta": text},
        {"type": "response.output_text.done", **where, "text": text},
        {"type": "response.content_part.done", **where, "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": message},
        {"type": "response.completed", "response": final},
    ]
    out = []
    for number, event in enumerate(events):
        event["sequence_number"] = number
        out.append(named_sse(event["type"], event))
    return out
