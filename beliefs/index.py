"""In-memory mirror of the store's beliefs with the alias search index (filled in by search)."""

from __future__ import annotations

import threading
from collections.abc import Iterable

from beliefs.models import Belief


class BeliefIndex:
    """Kept in step with every committed write by the store: `upsert` and `remove`."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._beliefs: dict[str, Belief] = {}

    def load(self, beliefs: Iterable[Belief]) -> None:
        with self._lock:
            for belief in beliefs:
                self.upsert(belief)

    def upsert(self, belief: Belief) -> None:
        with self._lock:
            self._beliefs[belief.id] = belief

    def remove(self, belief_id: str) -> None:
        with self._lock:
            self._beliefs.pop(belief_id, None)

    def get(self, belief_id: str) -> Belief | None:
        return self._beliefs.get(belief_id)

    def __len__(self) -> int:
        return len(self._beliefs)
