"""The Anthropic Messages protocol (`POST /v1/messages`): a top-level `system` (a string or
text blocks), user messages that may hold `tool_result` blocks, `message` objects and named
events from `message_start` to `message_stop`. Its calls go to their own upstream
(`TENURE_ANTHROPIC_UPSTREAM_URL`, else the default one), never through LiteLLM.

Persona and pinned beliefs go at the end of `system`; relevant beliefs at the end of the
turn's typed user message.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from proxy.errors import bad_field
from proxy.gateway.assistant_turn import AssistantTurn, function_call, named_sse
from proxy.gateway.forward import Upstream
from proxy.gateway.placement import (
    LAST_USER,
    last_user,
    stripped,
    text_of,
    with_block_at,
    with_text,
    without_echoed_messages,
)
from proxy.gateway.protocols.base import Body, Translation
from proxy.gateway.protocols.messages_body import check_head, check_messages
from proxy.gateway.turn_loop import TurnLoop, chat_turn, earlier_turn
from proxy.settings import Settings


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
    body: Body, system_block: str, user_block: str, *, at: int | None = LAST_USER
) -> Body:
    """A copy of `body` with the blocks placed: top-level `system`, and the user block at the
    end of message `at` (the turn's typed message; None places none)."""
    out = dict(body)
    if system_block:
        out["system"] = with_text(body.get("system"), system_block)
    messages: list[Any] = body["messages"]
    if at == LAST_USER:
        at = last_user(messages, ends_with_tool_result=anthropic_ends_with_tool_result(messages))
    placed = with_block_at(messages, at, user_block)
    if placed is not messages:
        out["messages"] = placed
    return out


def without_echoed_memory(body: Body) -> Body:
    """A copy of `body` without memory blocks the client sent back, in `system` and messages."""
    out = dict(body)
    if "system" in body:
        out["system"] = stripped(body["system"])
    return without_echoed_messages(out)


def _own_fields(body: Body) -> None:
    if "system" in body and not isinstance(body["system"], str | list):
        raise bad_field(
            "system",
            f"'system' must be a string or a list of blocks, got {type(body['system']).__name__}",
        )


# -- replies the gateway writes itself ----------------------------------------------------------


def anthropic_reply(text: str, *, model: str, request_id: str) -> bytes:
    """A complete Anthropic `message` object."""
    return json.dumps(_message(text, model=model, request_id=request_id)).encode()


def anthropic_stream(text: str, *, model: str, request_id: str) -> list[bytes]:
    """Anthropic streaming events from `message_start` to `message_stop`."""
    start = _message("", model=model, request_id=request_id)
    start.update(content=[], stop_reason=None)
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 0},
        },
        {"type": "message_stop"},
    ]
    return [named_sse(event["type"], event) for event in events]


def _message(text: str, *, model: str, request_id: str) -> dict[str, Any]:
    return {
        "id": f"msg_{request_id}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }


# -- the assistant turn read back out of a relayed reply ----------------------------------------


def _tool_use(block: Body, arguments: str) -> dict[str, Any]:
    return function_call(block.get("id", ""), block.get("name", ""), arguments)


def read_object(payload: Body) -> AssistantTurn:
    turn = AssistantTurn()
    texts: list[str] = []
    for block in payload.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "tool_use":
            turn.tool_calls.append(_tool_use(block, json.dumps(block.get("input", {}))))
    turn.text = "".join(texts)
    return turn


def read_events(events: list[Body]) -> AssistantTurn:
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, list[str]] = {}
    texts: dict[int, list[str]] = {}
    for payload in events:
        kind = payload.get("type")
        index = int(payload.get("index", 0)) if "index" in payload else 0
        if kind == "content_block_start" and isinstance(payload.get("content_block"), dict):
            block = payload["content_block"]
            blocks[index] = block
            if block.get("type") == "text":
                texts[index] = [block.get("text") or ""]
        elif kind == "content_block_delta" and isinstance(payload.get("delta"), dict):
            delta = payload["delta"]
            if delta.get("type") == "text_delta":
                texts.setdefault(index, []).append(delta.get("text") or "")
            elif delta.get("type") == "input_json_delta":
                partial.setdefault(index, []).append(delta.get("partial_json") or "")
    turn = AssistantTurn(text="".join("".join(texts[i]) for i in sorted(texts)))
    for index in sorted(blocks):
        block = blocks[index]
        if block.get("type") == "tool_use":
            arguments = "".join(partial.get(index, [])) or json.dumps(block.get("input") or {})
            turn.tool_calls.append(_tool_use(block, arguments))
    return turn


# -- the adapter ---------------------------------------------------------------------------------


class AnthropicMessages:
    endpoint = "messages"
    turn_wire: Literal["openai", "anthropic"] = "anthropic"
    translation: Translation | None = None  # its own upstream speaks it: no LiteLLM route

    def upstream(self, settings: Settings) -> Upstream:
        own_key = settings.anthropic_upstream_api_key
        return Upstream(
            settings.anthropic_upstream_url or settings.upstream_url,
            own_key or settings.upstream_api_key,
            "TENURE_ANTHROPIC_UPSTREAM_API_KEY" if own_key else "TENURE_UPSTREAM_API_KEY",
            bearer=False,
        )

    def check(self, body: Body) -> None:
        check_head(body)
        _own_fields(body)
        check_messages(body)

    def without_echoed_memory(self, body: Body) -> Body:
        return without_echoed_memory(body)

    def command_text(self, body: Body) -> str | None:
        messages: list[Any] = body["messages"]
        last = messages[-1] if messages else None
        if anthropic_ends_with_tool_result(messages):
            return None
        if isinstance(last, dict) and last.get("role") == "user":
            return text_of(last.get("content"))
        return None

    def turn(self, body: Body) -> TurnLoop:
        return chat_turn(body["messages"])

    def earlier(self, body: Body, turn: TurnLoop) -> tuple[TurnLoop, str]:
        return earlier_turn(body["messages"], turn)

    def said(self, body: Body) -> str:
        return anthropic_last_user_text(body["messages"])

    def system_texts(self, body: Body) -> list[str]:
        system = body.get("system")
        if isinstance(system, list):
            return [text_of([block]) for block in system]
        return [system] if isinstance(system, str) else []

    def place(self, body: Body, system_block: str, user_block: str, *, at: int | None) -> Body:
        return place_anthropic(body, system_block, user_block, at=at)

    def until_final(self, body: Body) -> bool:
        return True

    def synthetic(self, text: str, body: Body, *, request_id: str) -> bytes | list[bytes]:
        model: str = body["model"]
        if body.get("stream") is True:
            return anthropic_stream(text, model=model, request_id=request_id)
        return anthropic_reply(text, model=model, request_id=request_id)

    def read_events(self, events: list[Body]) -> AssistantTurn:
        return read_events(events)

    def read_object(self, payload: Body) -> AssistantTurn:
        return read_object(payload)


ANTHROPIC_MESSAGES = AnthropicMessages()
