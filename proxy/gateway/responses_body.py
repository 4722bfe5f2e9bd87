"""A Responses API request (`POST /v1/responses`): its checks, its turn and where memory goes.

`input` is a string or a list of items: messages (`role` user, assistant, system or developer;
content a string or `input_text` parts) beside function calls, their outputs, reasoning and
other items the gateway leaves alone. Persona and pinned beliefs go at the end of
`instructions` (rebuilt from the same state on every call, so the cached prefix stays the
same); relevant beliefs at the end of the turn's typed user message, on every request of its
tool loop alike (`function_call_output` and the other `*_output` items follow it).
A request chained by `previous_response_id` or `conversation` carries only its new items: the
turn is read from those.
"""

from __future__ import annotations

from typing import Any

from beliefs.context.render import append_block, strip_injected
from proxy.errors import bad_field
from proxy.gateway.placement import LAST_USER, stripped, text_of, with_text

_STRINGS = ("model", "instructions", "user", "safety_identifier", "previous_response_id")


def check_responses(body: dict[str, Any]) -> None:
    """Check the fields the gateway reads.

    Raises:
        ProxyError: 400 naming the first wrong field.
    """
    if not isinstance(body.get("model"), str):
        raise bad_field("model", "'model' is required and must be a string")
    for name in _STRINGS[1:]:
        value = body.get(name)
        if value is not None and not isinstance(value, str):
            raise bad_field(name, f"'{name}' must be a string, got {type(value).__name__}")
    for name, kind, label in (("stream", bool, "a boolean"), ("metadata", dict, "an object")):
        value = body.get(name)
        if value is not None and not isinstance(value, kind):
            raise bad_field(name, f"'{name}' must be {label}, got {type(value).__name__}")
    items = body.get("input")
    if items is None or isinstance(items, str):
        return
    if not isinstance(items, list):
        raise bad_field(
            "input", f"'input' must be a string or a list of items, got {type(items).__name__}"
        )
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise bad_field(
                f"input[{i}]", f"'input[{i}]' must be an object, got {type(item).__name__}"
            )


def _is_message(item: Any, role: str) -> bool:
    return (
        isinstance(item, dict)
        and item.get("role") == role
        and item.get("type", "message") == "message"
    )


def ends_with_tool_output(body: dict[str, Any]) -> bool:
    items = body.get("input")
    last = items[-1] if isinstance(items, list) and items else None
    kind = last.get("type") if isinstance(last, dict) else None
    return isinstance(kind, str) and kind.endswith("_output")


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last user message in `input` (the whole input when it is a string)."""
    items = body.get("input")
    if isinstance(items, str):
        return items
    for item in reversed(items or []):
        if _is_message(item, "user"):
            return text_of(item.get("content"))
    return ""


def last_item_text(body: dict[str, Any]) -> str | None:
    """The text of the last input item when it is a user message (a chat command's place)."""
    items = body.get("input")
    if isinstance(items, str):
        return items
    last = items[-1] if isinstance(items, list) and items else None
    if isinstance(last, dict) and _is_message(last, "user"):
        return text_of(last.get("content"))
    return None


def place_responses(
    body: dict[str, Any], system_block: str, user_block: str, *, at: int | None = LAST_USER
) -> dict[str, Any]:
    """A copy of `body` with the blocks placed; empty blocks are not placed. The user block
    goes at the end of input item `at` (the turn's typed message; None places none; by
    default the last user message unless the input ends with a tool's output)."""
    out = dict(body)
    if system_block:
        out["instructions"] = append_block(body.get("instructions") or "", system_block)
    items = body.get("input")
    if not user_block or at is None:
        return out
    if isinstance(items, str):
        out["input"] = append_block(items, user_block)
        return out
    if not isinstance(items, list):
        return out
    if at == LAST_USER:
        if ends_with_tool_output(body):
            return out
        at = next((i for i in range(len(items) - 1, -1, -1) if _is_message(items[i], "user")), None)
    if at is not None and 0 <= at < len(items) and isinstance(items[at], dict):
        item = items[at]
        placed = with_text(item.get("content"), user_block, part_type="input_text")
        out["input"] = [*items[:at], {**item, "content": placed}, *items[at + 1 :]]
    return out


def without_echoed_memory(body: dict[str, Any]) -> dict[str, Any]:
    """A copy of `body` without memory blocks the client sent back (a replayed prompt)."""
    out = dict(body)
    if isinstance(body.get("instructions"), str):
        out["instructions"] = strip_injected(body["instructions"])
    items = body.get("input")
    if isinstance(items, str):
        out["input"] = strip_injected(items)
    elif isinstance(items, list):
        out["input"] = [
            {**item, "content": stripped(item["content"])}
            if isinstance(item, dict) and "content" in item
            else item
            for item in items
        ]
    return out
