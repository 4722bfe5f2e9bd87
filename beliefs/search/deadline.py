"""`Deadline`: the time a search may take, after which it ranks what it has found.

The gateway gives context assembly a deadline (`TENURE_RETRIEVAL_TIMEOUT_MS`). A search past
it reads no further postings and weighs no further candidates: the request goes with the
standing layers and the hits found so far, instead of without memory after the time was spent.
Assembly without a deadline (the API, the CLI, the evaluation) is complete.
"""

from __future__ import annotations

import time


class Deadline:
    """A point on `time.perf_counter`'s clock; `reached` says whether a check found it passed."""

    __slots__ = ("at", "reached")

    def __init__(self, seconds: float) -> None:
        self.at = time.perf_counter() + seconds
        self.reached = False

    def passed(self) -> bool:
        """Whether the deadline has passed (once it has, it stays passed)."""
        if not self.reached and time.perf_counter() >= self.at:
            self.reached = True
        return self.reached


def passed(deadline: Deadline | None) -> bool:
    """Whether `deadline` (None: no deadline) has passed."""
    return deadline is not None and deadline.passed()
