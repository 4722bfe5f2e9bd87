"""The Responses API side of the stand-in provider: `POST /v1/responses`, JSON or SSE.

A scripted `Chat` becomes output items: a `message` with one `output_text` part, then one
`function_call` item per tool call (a `custom_tool_call` for a call with an `input`). Streams go
through the events clients read (`response.created` … `response.output_text.delta` …
`response.function_call_arguments.delta` … `response.output_item.done` … `response.completed`),
each with a `sequence_number`.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.upstream import Chat

_CREATED = 1_764_000_000
RESPONSE_ID = "resp_standin"


def _usage() -> dict[str, Any]:
    return {
        "input_tokens": 12,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 7,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 19,
    }


def _items(chat: Chat) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if chat.content:
        items.append(
            {
                "id": "msg_standin",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": chat.content, "annotations": []}],
            }
        )
    for n, call in enumerate(chat.tool_calls):
        if "input" in call:  # a custom (free-text) tool, such as Codex's `exec`
            items.append(
                {
                    "id": f"ctc_standin_{n}",
                    "type": "custom_tool_call",
                    "status": "completed",
                    "call_id": call["id"],
                    "name": call["name"],
                    "input": call["input"],
                }
            )
            continue
        items.append(
            {
                "id": f"fc_standin_{n}",
                "type": "function_call",
                "status": "completed",
                "call_id": call["id"],
                "name": call["name"],
                "arguments": call["arguments"],
            }
        )
    return items


def response_object(
    chat: Chat, *, body: dict[str, Any], status: str = "completed"
) -> dict[str, Any]:
    """A `response` object answering `body`."""
    done = status == "completed"
    return {
        "id": RESPONSE_ID,
        "object": "response",
        "created_at": _CREATED,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": None,
        "model": body.get("model", "stand-in-model"),
        "output": _items(chat) if done else [],
        "parallel_tool_calls": True,
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": body.get("store", True),
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": body.get("tools") or [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": _usage() if done else None,
        "metadata": body.get("metadata") or {},
    }


def response_events(chat: Chat, *, body: dict[str, Any]) -> list[bytes]:
    """The SSE events of a streamed response, in order."""
    events: list[dict[str, Any]] = []
    start = response_object(chat, body=body, status="in_progress")
    events.append({"type": "response.created", "response": start})
    events.append({"type": "response.in_progress", "response": start})
    for index, item in enumerate(_items(chat)):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            opened = {**item, "status": "in_progress", "content": []}
            part = {"type": "output_text", "text": "", "annotations": []}
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": opened}
            )
            events.append({"type": "response.content_part.added", **where, "part": part})
            for i, word in enumerate(text.split(" ")):
                delta = word if i == 0 else " " + word
                events.append({"type": "response.output_text.delta", **where, "delta": delta})
            events.append({"type": "response.output_text.done", **where, "text": text})
            events.append(
                {"type": "response.content_part.done", **where, "part": item["content"][0]}
            )
        elif item["type"] == "custom_tool_call":
            opened = {**item, "status": "in_progress", "input": ""}
            where = {"item_id": item["id"], "output_index": index}
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": opened}
            )
            events.append(
                {"type": "response.custom_tool_call_input.delta", **where, "delta": item["input"]}
            )
            events.append(
                {"type": "response.custom_tool_call_input.done", **where, "input": item["input"]}
            )
        else:
            opened = {**item, "status": "in_progress", "arguments": ""}
            where = {"item_id": item["id"], "output_index": index}
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": opened}
            )
            arguments = item["arguments"]
            middle = len(arguments) // 2
            for piece in (arguments[:middle], arguments[middle:]):
                events.append(
                    {"type": "response.function_call_arguments.delta", **where, "delta": piece}
                )
            events.append(
                {"type": "response.function_call_arguments.done", **where, "arguments": arguments}
            )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": response_object(chat, body=body)})
    out = []
    for number, event in enumerate(events):
        event["sequence_number"] = number
        out.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
    return out
