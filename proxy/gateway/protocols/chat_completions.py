"""The OpenAI Chat Completions protocol (`POST /v1/chat/completions`): `messages` with system
or developer messages, `tool` results, `chat.completion` objects and `chat.completion.chunk`
events ending with `[DONE]`.

Persona and pinned beliefs go at the end of the first system (or developer) message, a new
one first when there is none; relevant beliefs at the end of the turn's typed user message.
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal

from proxy.gateway.assistant_turn import AssistantTurn, sse
from proxy.gateway.forward import Upstream
from proxy.gateway.placement import (
    LAST_USER,
    last_user,
    text_of,
    with_block_at,
    with_text,
    without_echoed_messages,
)
from proxy.gateway.protocols.base import Body, Translation
from proxy.gateway.protocols.messages_body import check_head, check_messages
from proxy.gateway.request_body import expect
from proxy.gateway.turn_loop import TurnLoop, chat_turn, earlier_turn
from proxy.settings import Settings

_SYSTEM_ROLES = ("system", "developer")


def openai_last_user_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return text_of(message.get("content"))
    return ""


def openai_ends_with_tool_result(messages: list[Any]) -> bool:
    last = messages[-1] if messages else None
    return isinstance(last, dict) and last.get("role") in ("tool", "function")


def place_openai(
    body: Body, system_block: str, user_block: str, *, at: int | None = LAST_USER
) -> Body:
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
        at = last_user(messages, ends_with_tool_result=openai_ends_with_tool_result(messages))
    elif at is not None and len(messages) > len(body["messages"]):
        at += 1  # a system message was put first
    return {**body, "messages": with_block_at(messages, at, user_block)}


def _own_fields(body: Body) -> None:
    expect(body, "user", str)
    expect(body, "stream_options", dict)


# -- replies the gateway writes itself ----------------------------------------------------------


def openai_reply(text: str, *, model: str, request_id: str) -> bytes:
    """A complete `chat.completion` object."""
    return json.dumps(
        {
            "id": f"chatcmpl-{request_id}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }
    ).encode()


def openai_stream(text: str, *, model: str, request_id: str, include_usage: bool) -> list[bytes]:
    """`chat.completion.chunk` events ending with `[DONE]`."""
    base = {
        "id": f"chatcmpl-{request_id}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    usage: dict[str, Any] = {"usage": None} if include_usage else {}
    delta = {"role": "assistant", "content": text}
    events = [
        sse({**base, "choices": [_choice(delta, None)], **usage}),
        sse({**base, "choices": [_choice({}, "stop")], **usage}),
    ]
    if include_usage:
        zero = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        events.append(sse({**base, "choices": [], "usage": zero}))
    events.append(b"data: [DONE]\n\n")
    return events


def _choice(delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}


# -- the assistant turn read back out of a relayed reply ----------------------------------------


def _first_choice(payload: Body) -> Body:
    choices = payload.get("choices")
    if isinstance(choices, list):
        for choice in choices:
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                return choice
    return {}


def read_object(payload: Body) -> AssistantTurn:
    message = _first_choice(payload).get("message") or {}
    content = message.get("content")
    calls = message.get("tool_calls")
    return AssistantTurn(
        text=content if isinstance(content, str) else "",
        tool_calls=[c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else [],
    )


def read_events(events: list[Body]) -> AssistantTurn:
    parts: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for payload in events:
        delta = _first_choice(payload).get("delta") or {}
        if isinstance(delta.get("content"), str):
            parts.append(delta["content"])
        for call in delta.get("tool_calls") or []:
            if not isinstance(call, dict):
                continue
            slot = calls.setdefault(
                int(call.get("index", 0)),
                {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
            )
            if call.get("id"):
                slot["id"] = call["id"]
            if call.get("type"):
                slot["type"] = call["type"]
            function = call.get("function") or {}
            slot["function"]["name"] += function.get("name") or ""
            slot["function"]["arguments"] += function.get("arguments") or ""
    return AssistantTurn("".join(parts), [calls[i] for i in sorted(calls)])


# -- the adapter ---------------------------------------------------------------------------------


class CompletionTranslation:
    """A routed model answers through `litellm.acompletion`, in `chat.completion.chunk` events."""

    end = b"data: [DONE]\n\n"

    async def call(self, litellm: Any, model: str, body: Body, stream: bool, **kwargs: Any) -> Any:
        return await litellm.acompletion(
            model=model, messages=body["messages"], stream=stream, **kwargs
        )

    def event(self, event: Body, model: str) -> bytes:
        event["model"] = model
        return sse(event)


class ChatCompletions:
    endpoint = "chat/completions"
    turn_wire: Literal["openai", "anthropic"] = "openai"
    translation: Translation | None = CompletionTranslation()

    def upstream(self, settings: Settings) -> Upstream:
        return Upstream(settings.upstream_url, settings.upstream_api_key, "TENURE_UPSTREAM_API_KEY")

    def check(self, body: Body) -> None:
        check_head(body)
        _own_fields(body)
        check_messages(body)

    def without_echoed_memory(self, body: Body) -> Body:
        return without_echoed_messages(body)

    def command_text(self, body: Body) -> str | None:
        messages: list[Any] = body["messages"]
        last = messages[-1] if messages else None
        if isinstance(last, dict) and last.get("role") == "user":
            return text_of(last.get("content"))
        return None

    def turn(self, body: Body) -> TurnLoop:
        return chat_turn(body["messages"])

    def earlier(self, body: Body, turn: TurnLoop) -> tuple[TurnLoop, str]:
        return earlier_turn(body["messages"], turn)

    def said(self, body: Body) -> str:
        return openai_last_user_text(body["messages"])

    def system_texts(self, body: Body) -> list[str]:
        return [
            text_of(m.get("content"))
            for m in body["messages"]
            if isinstance(m, dict) and m.get("role") in _SYSTEM_ROLES
        ]

    def place(self, body: Body, system_block: str, user_block: str, *, at: int | None) -> Body:
        return place_openai(body, system_block, user_block, at=at)

    def until_final(self, body: Body) -> bool:
        return True

    def synthetic(self, text: str, body: Body, *, request_id: str) -> bytes | list[bytes]:
        model: str = body["model"]
        if body.get("stream") is not True:
            return openai_reply(text, model=model, request_id=request_id)
        options = body.get("stream_options") or {}
        include_usage = options.get("include_usage") is True
        return openai_stream(text, model=model, request_id=request_id, include_usage=include_usage)

    def read_events(self, events: list[Body]) -> AssistantTurn:
        return read_events(events)

    def read_object(self, payload: Body) -> AssistantTurn:
        return read_object(payload)


CHAT_COMPLETIONS = ChatCompletions()
