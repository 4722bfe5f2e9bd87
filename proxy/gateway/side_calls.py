"""Calls that are not turns: an app's background tasks, and a user message sent again.

Chat apps ask the model for a title, tags, follow-up questions or a search query beside the
chat itself (Open WebUI makes four calls per typed message, each with a `### Task:` prompt over
the conversation). Those calls still receive memory, but extracting them would write the same
beliefs again and count each as a reinforcement. `TASK_MARKERS` is the list to extend: a marker
matches the start of the last user message or of a system prompt part.

Agents also send a user message again: a retry, a regenerate, a whole history replayed.
`SeenMessages` remembers which typed messages were handed to extraction, per user and agent
(by their turn's key: the words and their place in the conversation, so the same short reply
typed later is a new message), so each is extracted once.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable

TASK_MARKERS: tuple[str, ...] = (
    r"### Task:",  # Open WebUI: titles, tags, follow-ups, queries, autocomplete, emoji
    r"(?:Generate|Create) a concise,? [\w\s(),-]{0,40}title",  # Claude Code, LibreChat …
    r"Please write a \d+-\d+ word title",
    r"Summarize this coding conversation in under \d+ characters",
    r"Analyze if this message indicates a new conversation topic",
    r"Generate a (?:short|concise) title for (?:this|the following) conversation",
)
_TASK = re.compile("|".join(f"(?:{m})" for m in TASK_MARKERS), re.IGNORECASE)
_LEAD = 400  # a marker opens the prompt; look no further


def is_task_call(user_text: str, system_texts: Iterable[str] = ()) -> bool:
    """Whether a request is an app's background task rather than a turn of the chat."""
    return any(_TASK.match(text.lstrip()[:_LEAD]) for text in (user_text, *system_texts) if text)


class SeenMessages:
    """The user messages recently handed to extraction, as digests per (user, agent), and the
    typed messages whose turns began here (their job comes with the turn's final answer)."""

    def __init__(self, size: int = 8192, ttl_s: float = 24 * 3600.0) -> None:
        self._size = size
        self._ttl = ttl_s
        self._lock = threading.Lock()
        self._seen: OrderedDict[bytes, float] = OrderedDict()
        self._begun: OrderedDict[bytes, float] = OrderedDict()

    def first_time(self, user_id: str, agent_id: str | None, text: str) -> bool:
        """True the first time `text` comes from this user and agent (and marks it seen)."""
        if not text.strip():
            return True
        key = _digest(user_id, agent_id, text)
        now = time.monotonic()
        with self._lock:
            seen = self._seen.get(key)
            _note(self._seen, key, now, self._size)
        return seen is None or now - seen > self._ttl

    def begin(self, user_id: str, agent_id: str | None, text: str) -> None:
        """Note that the turn of a typed message (`text`: its key) is under way here."""
        with self._lock:
            _note(self._begun, _digest(user_id, agent_id, text), time.monotonic(), self._size)

    def unfinished(self, user_id: str, agent_id: str | None, text: str) -> bool:
        """True, once, for a turn that began here and was never handed to extraction (its loop
        was cut off before a final answer); it then counts as seen."""
        key = _digest(user_id, agent_id, text)
        now = time.monotonic()
        with self._lock:
            began, seen = self._begun.pop(key, None), self._seen.get(key)
            if (
                began is None
                or now - began > self._ttl
                or (seen is not None and now - seen <= self._ttl)
            ):
                return False
            _note(self._seen, key, now, self._size)
        return True


def _digest(user_id: str, agent_id: str | None, text: str) -> bytes:
    joined = "\x00".join((user_id, agent_id or "", text.strip()))
    return hashlib.blake2b(joined.encode("utf-8", "replace"), digest_size=16).digest()


def _note(entries: OrderedDict[bytes, float], key: bytes, now: float, size: int) -> None:
    entries[key] = now
    entries.move_to_end(key)
    while len(entries) > size:
        entries.popitem(last=False)
