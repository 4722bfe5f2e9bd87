"""The turn a request belongs to: the user message a person typed, and the tool loop since.

An agent answers one typed message with several requests: each tool result goes back in a
request that resends the history (Chat Completions `tool` messages, Anthropic `tool_result`
blocks, Responses `function_call_output` items), and a harness may add user messages of its
own meanwhile (a subagent's notification, a validation retry). All of them belong to the turn
of the last typed message: they carry its memory, placed again in the same place, and its one
extraction job waits for the turn's final answer.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from proxy.gateway.authorship import typed_words
from proxy.gateway.identity import Identity
from proxy.gateway.placement import text_of


@dataclass(frozen=True, slots=True)
class TurnLoop:
    """Where the request's turn started and what it has done since."""

    at: int | None  # the typed message's index in `messages` (or `input`); None: none typed
    words: str  # what the person typed in it, harness blocks dropped
    looping: bool  # the model already answered it: this request continues its tool loop
    tools: tuple[str, ...]  # the tools called since it, by name, in order

    def key(self, identity: Identity) -> str | None:
        """The conversation's key for this turn: who, where, and the typed message with its
        position (the same message typed again later is another turn)."""
        if self.at is None:
            return None
        parts = (
            identity.user_id,
            identity.agent_id or "",
            ",".join(identity.all_scopes),
            str(self.at),
            self.words,
        )
        digest = hashlib.blake2b("\x00".join(parts).encode("utf-8", "replace"), digest_size=16)
        return digest.hexdigest()


NO_TURN = TurnLoop(None, "", False, ())


def chat_turn(messages: list[Any]) -> TurnLoop:
    """The turn of a Chat Completions or Anthropic request: its last typed user message and
    the assistant's tool calls since. Tool results are never typed words; text a person typed
    beside them (an Anthropic user message may hold both) starts a turn of its own."""
    for at in range(len(messages) - 1, -1, -1):
        message = messages[at]
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        words = typed_words(text_of(message.get("content")))
        if words:
            later = [m for m in messages[at + 1 :] if isinstance(m, dict)]
            replies = [m for m in later if m.get("role") == "assistant"]
            return TurnLoop(at, words, bool(replies), _chat_tools(replies))
    return NO_TURN


def _chat_tools(replies: list[dict[str, Any]]) -> tuple[str, ...]:
    names: list[str] = []
    for reply in replies:
        for call in reply.get("tool_calls") or []:  # Chat Completions
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                names.append(function["name"])
        content = reply.get("content")
        for block in content if isinstance(content, list) else []:  # Anthropic
            if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use"):
                names.append(str(block.get("name", "")))
    return tuple(names)


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


def earlier_turn(items: list[Any], turn: TurnLoop, *, responses: bool) -> tuple[TurnLoop, str]:
    """The typed message before `turn` (with its loop as the history shows it) and the last
    answer it got there; `items`: the request's `messages`, or its `input` items."""
    if not turn.at:
        return NO_TURN, ""
    before = items[: turn.at]
    earlier = responses_turn({"input": before}) if responses else chat_turn(before)
    if earlier.at is None:
        return NO_TURN, ""
    answers = [
        text_of(item.get("content"))
        for item in before[earlier.at + 1 :]
        if isinstance(item, dict) and item.get("role") == "assistant"
    ]
    return earlier, next((answer for answer in reversed(answers) if answer), "")
