"""Values worked out from one belief object, kept while that object is the current one.

Every write replaces a belief's object in the index, so an answer remembered for the object
(checked by identity, not by id) can never outlive the state it was computed from. Requests
keep meeting the same beliefs, so their weights, template rules and rendered lines are worked
out once instead of on every turn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from beliefs.models import Belief

T = TypeVar("T")

MAX_REMEMBERED = 200_000  # entries kept; replaced objects are dropped in bulk past this


class BeliefMemo(Generic[T]):
    """`get(belief, compute)`: compute(belief) once per belief object."""

    __slots__ = ("_compute", "values")

    def __init__(self, compute: Callable[[Belief], T]) -> None:
        self._compute = compute
        self.values: dict[str, tuple[Belief, T]] = {}  # id -> (belief object, value)

    def get(self, belief: Belief) -> T:
        entry = self.values.get(belief.id)
        if entry is not None and entry[0] is belief:
            return entry[1]
        return self.work_out(belief)

    def work_out(self, belief: Belief) -> T:
        """Compute and remember (callers on a hot path inline `get`'s lookup)."""
        value = self._compute(belief)
        if len(self.values) >= MAX_REMEMBERED:
            self.values.clear()
        self.values[belief.id] = (belief, value)
        return value
