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

from typing import Any, Literal

from beliefs.context.render import append_block, strip_injected
from proxy.errors import bad_field
from proxy.gateway.assistant_turn import AssistantTurn, named_sse
from proxy.gateway.authorship import typed_words
from proxy.gateway.forward import Upstream
from proxy.gateway.placement import LAST_USER, stripped, text_of, with_text
from proxy.gateway.protocols.base import Body, Translation
from proxy.gateway.protocols.responses_events import (
    output_turn,
    response_events,
    response_reply,
    stream_turn,
)
from proxy.gateway.turn_loop import NO_TURN, TurnLoop, earlier_turn
from proxy.settings import Settings

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


# -- the turn and its tool loop -----------------------------------------------------------------


def responses_turn(body: dict[str, Any]) -> TurnLoop:
    """The turn of a Responses request: its last typed user message in `input` and the calls
    since (a function call by its name, a built-in tool call by its type)."""
    items = body.get("input")
    if isinstance(items, str):
        words = typed_words(items)
        return TurnLoop(0, words, False, ()) if words else NO_TURN
    items = items if isinstance(items, list) else []
    for at in range(len(items) - 1, -1, -1):
        item = items[at]
        if not (
            isinstance(item, dict)
            and item.get("role") == "user"
            and item.get("type", "message") == "message"
        ):
            continue
        words = typed_words(text_of(item.get("content")))
        if words:
            later = [i for i in items[at + 1 :] if isinstance(i, dict)]
            return TurnLoop(at, words, any(map(_answered, later)), _responses_tools(later))
    return NO_TURN


def _answered(item: dict[str, Any]) -> bool:
    kind = item.get("type", "message")
    return item.get("role") == "assistant" or (isinstance(kind, str) and kind.endswith("_call"))


def _responses_tools(items: list[dict[str, Any]]) -> tuple[str, ...]:
    names = []
    for item in items:
        kind = item.get("type")
        if isinstance(kind, str) and kind.endswith("_call"):
            name = item.get("name")
            names.append(name if isinstance(name, str) and name else kind)
    return tuple(names)


def chained(body: dict[str, Any]) -> bool:
    """A Responses request chained by `previous_response_id` or `conversation`: it carries
    only its new items, so its turn's history is not sent again."""
    return bool(body.get("previous_response_id") or body.get("conversation"))


# -- the adapter ---------------------------------------------------------------------------------


class ResponseTranslation:
    """A routed model answers through `litellm.aresponses` (which bridges providers without a
    Responses API to their chat API), in named `response.*` events."""

    end = b""

    async def call(self, litellm: Any, model: str, body: Body, stream: bool, **kwargs: Any) -> Any:
        return await litellm.aresponses(
            model=model, input=body.get("input", ""), stream=stream, **kwargs
        )

    def event(self, event: Body, model: str) -> bytes:
        """A Responses API event as SSE (`event:` names its type), with the client's model."""
        response = event.get("response")
        if isinstance(response, dict):
            response["model"] = model
        return named_sse(str(event.get("type") or "message"), event)


class Responses:
    endpoint = "responses"
    turn_wire: Literal["openai", "anthropic"] = "openai"
    translation: Translation | None = ResponseTranslation()

    def upstream(self, settings: Settings) -> Upstream:
        return Upstream(settings.upstream_url, settings.upstream_api_key, "TENURE_UPSTREAM_API_KEY")

    def check(self, body: Body) -> None:
        check_responses(body)

    def without_echoed_memory(self, body: Body) -> Body:
        return without_echoed_memory(body)

    def command_text(self, body: Body) -> str | None:
        return last_item_text(body)

    def turn(self, body: Body) -> TurnLoop:
        return responses_turn(body)

    def earlier(self, body: Body, turn: TurnLoop) -> tuple[TurnLoop, str]:
        items = body.get("input")
        return earlier_turn(
            items if isinstance(items, list) else [],
            turn,
            lambda before: responses_turn({"input": before}),
        )

    def said(self, body: Body) -> str:
        return "" if ends_with_tool_output(body) else last_user_text(body)

    def system_texts(self, body: Body) -> list[str]:
        instructions = body.get("instructions")
        return [instructions] if isinstance(instructions, str) else []

    def place(self, body: Body, system_block: str, user_block: str, *, at: int | None) -> Body:
        return place_responses(body, system_block, user_block, at=at)

    def until_final(self, body: Body) -> bool:
        # A chained request does not send its history again: its own reply ends its part.
        return not chained(body)

    def synthetic(self, text: str, body: Body, *, request_id: str) -> bytes | list[bytes]:
        model: str = body["model"]
        if body.get("stream") is True:
            return response_events(text, model=model, request_id=request_id)
        return response_reply(text, model=model, request_id=request_id)

    def read_events(self, events: list[Body]) -> AssistantTurn:
        return AssistantTurn(*stream_turn(events))

    def read_object(self, payload: Body) -> AssistantTurn:
        return AssistantTurn(*output_turn(payload.get("output")))


RESPONSES = Responses()
