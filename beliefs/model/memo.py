"""Values worked out from one belief object, kept while that object is the current one.

Every write replaces a belief's object in the index, so an answer remembered for the object
(checked by identity, not by id) can never outlive the state it was computed from. Requests
keep meeting the same beliefs, so their weights, template rules and rendered lines are worked
out once instead of on every turn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from beliefs.model.record import AnyBelief

T = TypeVar("T")

MAX_REMEMBERED = 200_000  # entries kept; replaced objects are dropped in bulk past this


class BeliefMemo(Generic[T]):
    """`get(belief, compute)`: compute(belief) once per belief object."""

    __slots__ = ("_compute", "_values")

    def __init__(self, compute: Callable[[AnyBelief], T]) -> None:
        self._compute = compute
        self._values: dict[str, tuple[AnyBelief, T]] = {}  # id -> (belief object, value)

    def get(self, belief: AnyBelief) -> T:
        entry = self._values.get(belief.id)
        if entry is not None and entry[0] is belief:
            return entry[1]
        value = self._compute(belief)
        if len(self._values) >= MAX_REMEMBERED:
            self._values.clear()
        self._values[belief.id] = (belief, value)
        return value
