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

# Text part types: `text`, and the input and output text parts of typed items.
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


def without_echoed_messages(body: dict[str, Any]) -> dict[str, Any]:
    """A copy of `body` without memory blocks the client sent back in its `messages` (an agent
    that replays the prompt as it was sent upstream): they would be placed twice, searched as
    the user's words and handed to extraction. Text parts that held only a block are dropped."""
    out = dict(body)
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


# `at` of the place functions: the last user message, unless the request ends with tool results.
LAST_USER = -1


def with_block_at(messages: list[Any], at: int | None, block: str) -> list[Any]:
    """`messages` with `block` at the end of message `at` (a new list), or as they are."""
    if not block or at is None or not 0 <= at < len(messages):
        return messages
    message = messages[at]
    if not isinstance(message, dict):
        return messages
    placed = list(messages)
    placed[at] = {**message, "content": with_text(message.get("content"), block)}
    return placed


def last_user(messages: list[Any], *, ends_with_tool_result: bool) -> int | None:
    if ends_with_tool_result:
        return None
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, dict) and message.get("role") == "user":
            return i
    return None
