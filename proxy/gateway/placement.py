"""Where memory goes in a request, keeping its cacheable prefix stable.

Persona and pinned beliefs (rarely change) go at the end of the system message; the
turn-dependent relevant beliefs at the end of the turn's typed user message, on every request
of its tool loop alike (`turn_loop.py`), so the prefix a loop request shares with the one
before it is byte for byte the same. Only the touched messages are copied; the rest
of the request (unknown fields, content parts, `cache_control`, tools) is left as it came.
"""

from __future__ import annotations

from typing import Any

from beliefs.context.render import append_block, strip_injected

_SYSTEM_ROLES = ("system", "developer")


# Text part types: chat completions and Anthropic `text`, the Responses API's input and output.
TEXT_PARTS = frozenset({"text", "input_text", "output_text"})


def is_text_part(part: Any) -> bool:
    """A content part holding text. Any other shape (a `type` that is a list, a `text` that
    is a number) is no text of the turn's and goes upstream untouched, for the provider to
    refuse, as other fields the gateway does not read do."""
    if not isinstance(part, dict) or not isinstance(part.get("text"), str):
        return False
    kind = part.get("type")
    return isinstance(kind, str) and kind in TEXT_PARTS


def text_of(content: Any) -> str:
    """The text of a message content: a string, or the text parts of a content array."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part["text"] for part in content if is_text_part(part))
    return ""


def with_text(content: Any, block: str, *, part_type: str = "text") -> Any:
    """`content` with `block` appended: as a new part of a content array, else to the text."""
    if isinstance(content, list):
        return [*content, {"type": part_type, "text": block}]
    if content is None or isinstance(content, str):
        # The separator `append_block` writes is exactly what `strip_injected` removes again.
        return append_block(content or "", block)
    return content  # not a content shape: left for the provider to refuse, not overwritten


def without_echoed_memory(body: dict[str, Any], *, anthropic: bool) -> dict[str, Any]:
    """A copy of `body` without memory blocks the client sent back (an agent that replays the
    prompt as it was sent upstream): they would be placed twice, searched as the user's words
    and handed to extraction. Text parts that held only a block are dropped."""
    out = dict(body)
    if anthropic and "system" in body:
        out["system"] = stripped(body["system"])
    out["messages"] = [
        {**m, "content": stripped(m["content"])} if isinstance(m, dict) and "content" in m else m
        for m in body["messages"]
    ]
    return out


def stripped(content: Any) -> Any:
    """A message content without injected memory blocks (parts that held only one dropped)."""
    if isinstance(content, str):
        return strip_injected(content)
    if not isinstance(content, list):
        return content
    parts = []
    for part in content:
        if is_text_part(part):
            text = part["text"]
            left = strip_injected(text)
            if not left and text:
                continue  # the part was only memory
            part = {**part, "text": left}
        parts.append(part)
    return parts


def system_texts(body: dict[str, Any], *, anthropic: bool) -> list[str]:
    """Each text of the system prompt: Anthropic's `system` string or blocks, else the text of
    each system or developer message."""
    if anthropic:
        system = body.get("system")
        if isinstance(system, list):
            return [text_of([block]) for block in system]
        return [system] if isinstance(system, str) else []
    return [
        text_of(m.get("content"))
        for m in body["messages"]
        if isinstance(m, dict) and m.get("role") in _SYSTEM_ROLES
    ]


TENURE_METADATA = ("tenure_user", "tenure_agent", "tenure_scope")


def has_tenure_metadata(body: dict[str, Any]) -> bool:
    metadata = body.get("metadata")
    return isinstance(metadata, dict) and any(key in metadata for key in TENURE_METADATA)


def without_tenure_metadata(body: dict[str, Any]) -> dict[str, Any]:
    """A copy of `body` without the identity keys Tenure reads from `metadata` (Anthropic
    refuses keys it does not know); `metadata` goes when nothing else is left in it."""
    rest = {k: v for k, v in body["metadata"].items() if k not in TENURE_METADATA}
    out = {k: v for k, v in body.items() if k != "metadata"}
    if rest:
        out["metadata"] = rest
    return out


# OpenAI chat completions


def openai_last_user_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return text_of(message.get("content"))
    return ""


def openai_ends_with_tool_result(messages: list[Any]) -> bool:
    last = messages[-1] if messages else None
    return isinstance(last, dict) and last.get("role") in ("tool", "function")


# `at` of the place functions: the last user message, unless the request ends with tool results.
LAST_USER = -1


def _with_block_at(messages: list[Any], at: int | None, block: str) -> list[Any]:
    """`messages` with `block` at the end of message `at` (a new list), or as they are."""
    if not block or at is None or not 0 <= at < len(messages):
        return messages
    message = messages[at]
    if not isinstance(message, dict):
        return messages
    placed = list(messages)
    placed[at] = {**message, "content": with_text(message.get("content"), block)}
    return placed


def _last_user(messages: list[Any], *, ends_with_tool_result: bool) -> int | None:
    if ends_with_tool_result:
        return None
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, dict) and message.get("role") == "user":
            return i
    return None


def place_openai(
    body: dict[str, Any], system_block: str, user_block: str, *, at: int | None = LAST_USER
) -> dict[str, Any]:
    """A copy of `body` with the blocks placed; empty blocks are not placed. The user block
    goes at the end of message `at` (the turn's typed message); None places none."""
    messages: list[Any] = list(body["messages"])
    if system_block:
        index = next(
            (
                i
                for i, m in enumerate(messages)
                if isinstance(m, dict) and m.get("role") in _SYSTEM_ROLES
            ),
            None,
        )
        if index is None:
            messages.insert(0, {"role": "system", "content": system_block})
        else:
            message = messages[index]
            messages[index] = {
                **message,
                "content": with_text(message.get("content"), system_block),
            }
    if at == LAST_USER:
        at = _last_user(messages, ends_with_tool_result=openai_ends_with_tool_result(messages))
    elif at is not None and len(messages) > len(body["messages"]):
        at += 1  # a system message was put first
    return {**body, "messages": _with_block_at(messages, at, user_block)}


# Anthropic messages


def _is_tool_result(message: Any) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_result" for block in content
    )


def anthropic_last_user_text(messages: list[Any]) -> str:
    """The text of the last user message that is not only tool results."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            text = text_of(message.get("content"))
            if text or not _is_tool_result(message):
                return text
    return ""


def anthropic_ends_with_tool_result(messages: list[Any]) -> bool:
    last = messages[-1] if messages else None
    return isinstance(last, dict) and last.get("role") == "user" and _is_tool_result(last)


def place_anthropic(
    body: dict[str, Any], system_block: str, user_block: str, *, at: int | None = LAST_USER
) -> dict[str, Any]:
    """A copy of `body` with the blocks placed: top-level `system`, and the user block at the
    end of message `at` (the turn's typed message; None places none)."""
    out = dict(body)
    if system_block:
        out["system"] = with_text(body.get("system"), system_block)
    messages: list[Any] = body["messages"]
    if at == LAST_USER:
        at = _last_user(messages, ends_with_tool_result=anthropic_ends_with_tool_result(messages))
    placed = _with_block_at(messages, at, user_block)
    if placed is not messages:
        out["messages"] = placed
    return out
