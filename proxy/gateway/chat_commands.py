"""Chat commands typed as the last user message: `!scope …`, `!extract on|off`, `!inject on|off`.

They answer with a synthetic assistant reply and never reach the upstream. The state they set
is kept per user + agent in memory (read on the request path) and persisted to the
`chat_state` table (migration 2) through the background writer, so it survives a restart.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

from proxy.errors import ProxyError
from proxy.gateway.identity import UNIVERSAL, parse_scopes

CommandName = Literal["scope", "extract", "inject"]
_NAMES: tuple[CommandName, ...] = ("scope", "extract", "inject")
_CLEAR = frozenset({"clear", "none", "off", "reset"})


@dataclass(frozen=True, slots=True)
class ChatState:
    scopes: tuple[str, ...] = ()
    extract: bool = True
    inject: bool = True


@dataclass(frozen=True, slots=True)
class ChatCommand:
    name: CommandName
    argument: str


def parse_command(text: str) -> ChatCommand | None:
    """The command in a user message, or None when the message is not a command.

    Any whitespace separates the name from its argument (a tab, a new line, a no-break space).
    A message whose argument reads as prose — several words, not a list of scopes — is talk
    that starts with a command word ("!extract the tables from this PDF") and goes to the
    model; a one-word argument is a command, and a wrong one is answered.
    """
    stripped = text.strip()
    if not stripped.startswith("!"):
        return None
    parts = stripped[1:].split(None, 1)
    name = parts[0].lower() if parts else ""
    known = next((n for n in _NAMES if n == name), None)
    if known is None:
        return None
    argument = parts[1].strip() if len(parts) > 1 else ""
    words = argument.replace(",", " ").split()
    if len(words) > 1 and not (known == "scope" and all(":" in word for word in words)):
        return None
    return ChatCommand(known, argument)


def apply_command(state: ChatState, command: ChatCommand) -> tuple[ChatState, str]:
    """The new state and the reply text; a bad argument leaves the state unchanged."""
    argument = command.argument
    if command.name == "scope":
        if not argument:
            return state, _describe_scope(state, "is")
        if argument.lower() in _CLEAR:
            return replace(
                state, scopes=()
            ), "Tenure: chat scope cleared; only user:universal applies."
        try:
            scopes = parse_scopes(argument.replace(" ", ","), "!scope")
        except ProxyError as exc:
            return state, f"Tenure: {exc.message}. Scope unchanged."
        new = replace(state, scopes=scopes)
        return new, _describe_scope(new, "is now")
    label = "extraction" if command.name == "extract" else "memory injection"
    current = state.extract if command.name == "extract" else state.inject
    value = argument.lower()
    if not value:
        return state, f"Tenure: {label} is {'on' if current else 'off'} for this chat."
    if value not in ("on", "off"):
        return state, f"Tenure: `!{command.name}` takes on or off, not {argument!r}."
    enabled = value == "on"
    new = (
        replace(state, extract=enabled)
        if command.name == "extract"
        else replace(state, inject=enabled)
    )
    return new, f"Tenure: {label} is now {value} for this chat."


def _describe_scope(state: ChatState, verb: str) -> str:
    if not state.scopes:
        return (
            f"Tenure: no chat scope set; only {UNIVERSAL} applies. "
            "Set one with `!scope domain:code`."
        )
    return f"Tenure: chat scope {verb} {', '.join(state.scopes)} (plus {UNIVERSAL})."


StateKey = tuple[str, str]


class ChatStates:
    """The in-memory table of chat states, keyed by (user id, agent id or "")."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[StateKey, ChatState] = {}

    def load(self, rows: Iterable[tuple[str, str, list[str], bool, bool]]) -> None:
        with self._lock:
            for user, agent, scopes, extract, inject in rows:
                self._states[(user, agent)] = ChatState(tuple(scopes), extract, inject)

    def get(self, user_id: str, agent_id: str | None) -> ChatState:
        return self._states.get((user_id, agent_id or ""), _DEFAULT)

    def set(self, user_id: str, agent_id: str | None, state: ChatState) -> None:
        with self._lock:
            self._states[(user_id, agent_id or "")] = state


_DEFAULT = ChatState()

SAVE_SQL = (
    "INSERT OR REPLACE INTO chat_state (user_id, agent_id, scopes, extract, inject, updated_at) "
    "VALUES (?, ?, ?, ?, ?, now())"
)
LOAD_SQL = "SELECT user_id, agent_id, scopes, extract, inject FROM chat_state"
