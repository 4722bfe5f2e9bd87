"""The turn a request belongs to: the user message a person typed, and the tool loop since.

An agent answers one typed message with several requests: each tool result goes back in a
request that resends the history (a `tool` message, a `tool_result` block, a
`function_call_output` item, as each protocol has it), and a harness may add user messages of its
own meanwhile (a subagent's notification, a validation retry). All of them belong to the turn
of the last typed message: they carry its memory, placed again in the same place, and its one
extraction job waits for the turn's final answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
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
    """The turn of a request holding a list of chat `messages`: its last typed user message and
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


def earlier_turn(
    items: list[Any], turn: TurnLoop, turn_of: Callable[[list[Any]], TurnLoop] = chat_turn
) -> tuple[TurnLoop, str]:
    """The typed message before `turn` (with its loop as the history shows it) and the last
    answer it got there; `items`: the request's messages or input items, whose turn
    `turn_of` reads."""
    if not turn.at:
        return NO_TURN, ""
    before = items[: turn.at]
    earlier = turn_of(before)
    if earlier.at is None:
        return NO_TURN, ""
    answers = [
        text_of(item.get("content"))
        for item in before[earlier.at + 1 :]
        if isinstance(item, dict) and item.get("role") == "assistant"
    ]
    return earlier, next((answer for answer in reversed(answers) if answer), "")
