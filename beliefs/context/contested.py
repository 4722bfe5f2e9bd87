"""Open contradictions held in memory, by the live belief they contest.

Every request's context asks whether a delivered belief is contested, and assembly reads no
database, so the open rows of the conflicts table are kept here: loaded on open, changed as a
conflict opens or closes (after its transaction commits), reloaded when another replica's
changes arrive.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from beliefs.model.models import as_utc

OPEN_SQL = (
    "SELECT c.id, c.existing_id, c.proposed, b.content, c.created_at FROM conflicts c "
    "LEFT JOIN beliefs b ON b.id = c.new_id WHERE c.status = 'open' ORDER BY c.created_at, c.id"
)


@dataclass(frozen=True)
class Contradiction:
    """What a turn claimed against a live belief, still unresolved."""

    conflict_id: str
    belief_id: str
    claim: str
    said_at: datetime


class Contested:
    """The open contradictions of every user, by contested belief id; `version` changes with
    them (a cached context made before a change is stale)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_belief: dict[str, tuple[Contradiction, ...]] = {}
        self.version = 0

    def of(self, belief_id: str) -> tuple[Contradiction, ...]:
        return self._by_belief.get(belief_id, ())

    def __bool__(self) -> bool:
        return bool(self._by_belief)

    def add(self, contradiction: Contradiction) -> None:
        with self._lock:
            held = self._by_belief.get(contradiction.belief_id, ())
            self._by_belief[contradiction.belief_id] = (*held, contradiction)
            self.version += 1

    def discard(self, conflict_id: str) -> None:
        with self._lock:
            for belief_id, held in list(self._by_belief.items()):
                kept = tuple(c for c in held if c.conflict_id != conflict_id)
                if len(kept) == len(held):
                    continue
                if kept:
                    self._by_belief[belief_id] = kept
                else:
                    del self._by_belief[belief_id]
            self.version += 1

    def load(self, rows: Sequence[Sequence[Any]]) -> None:
        """Replace everything with these rows of `OPEN_SQL`."""
        by_belief: dict[str, tuple[Contradiction, ...]] = {}
        for conflict_id, belief_id, proposed, new_content, created_at in rows:
            claim = json.loads(proposed).get("content", "") if proposed else new_content
            if not claim:
                continue
            found = Contradiction(conflict_id, belief_id, str(claim), as_utc(created_at))
            by_belief[belief_id] = (*by_belief.get(belief_id, ()), found)
        with self._lock:
            self._by_belief = by_belief
            self.version += 1
