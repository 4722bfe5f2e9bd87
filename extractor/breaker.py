"""A circuit breaker around the extraction model: stop calling it while it keeps failing."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Literal

from extractor.errors import ModelSilent

BreakerState = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    """Opens after `threshold` consecutive failures; after `cooldown_s` lets one probe through."""

    def __init__(
        self,
        threshold: int,
        cooldown_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.threshold = threshold
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._probing = False
        self._last_error: str | None = None
        self._opened_count = 0

    def allow(self) -> bool:
        """May a call go out now? In half-open state only one caller gets the probe."""
        with self._lock:
            if self._opened_at is None:
                return True
            if self._probing or self._clock() - self._opened_at < self.cooldown_s:
                return False
            self._probing = True
            return True

    def release(self) -> None:
        """Give back a probe that was granted but not used."""
        with self._lock:
            self._probing = False

    def retry_in(self) -> float:
        """Seconds until a call may go out (0 when closed or a probe is due)."""
        with self._lock:
            if self._opened_at is None:
                return 0.0
            return max(0.0, self.cooldown_s - (self._clock() - self._opened_at))

    def record_success(self) -> None:
        with self._lock:
            self._failures = 0
            self._opened_at = None
            self._probing = False

    def record_failure(self, error: str = "") -> None:
        with self._lock:
            self._failures += 1
            self._last_error = error or self._last_error
            if self._probing or self._failures >= self.threshold:
                if self._opened_at is None or self._probing:
                    self._opened_count += 1
                self._opened_at = self._clock()
            self._probing = False

    def _state(self) -> BreakerState:
        if self._opened_at is None:
            return "closed"
        if self._probing or self._clock() - self._opened_at >= self.cooldown_s:
            return "half_open"
        return "open"

    def state(self) -> dict[str, Any]:
        """For /healthz: state, consecutive failures, seconds until the next probe, last error."""
        with self._lock:
            retry = 0.0
            if self._opened_at is not None:
                retry = max(0.0, self.cooldown_s - (self._clock() - self._opened_at))
            return {
                "state": self._state(),
                "consecutive_failures": self._failures,
                "threshold": self.threshold,
                "cooldown_s": self.cooldown_s,
                "retry_in_s": round(retry, 3),
                "times_opened": self._opened_count,
                "last_error": self._last_error,
            }


def counts_as_outage(exc: BaseException) -> bool:
    """Does this failure count toward opening the breaker?

    The breaker is for a provider that is down or refusing. A model that is merely slow (it
    fell silent for longer than TENURE_EXTRACT_TIMEOUT) is a configuration fact: its job is
    retried and names the setting, and other jobs keep going to it.
    """
    return not isinstance(exc, ModelSilent)
