from __future__ import annotations

from extractor.breaker import CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_opens_after_threshold_then_probes_once_after_cooldown() -> None:
    clock = Clock()
    breaker = CircuitBreaker(3, 60, clock=clock)
    for _ in range(2):
        breaker.record_failure("boom")
    assert breaker.allow() and breaker.state()["state"] == "closed"
    breaker.record_failure("boom")
    assert breaker.state()["state"] == "open"
    assert not breaker.allow()
    assert breaker.retry_in() == 60
    clock.now += 61
    assert breaker.state()["state"] == "half_open"
    assert breaker.allow()
    assert not breaker.allow()  # only one probe
    breaker.record_success()
    assert breaker.state() | {"last_error": None} == {
        "state": "closed",
        "consecutive_failures": 0,
        "threshold": 3,
        "cooldown_s": 60,
        "retry_in_s": 0.0,
        "times_opened": 1,
        "last_error": None,
    }


def test_a_failed_probe_reopens_for_a_full_cooldown() -> None:
    clock = Clock()
    breaker = CircuitBreaker(1, 10, clock=clock)
    breaker.record_failure("down")
    clock.now += 11
    assert breaker.allow()
    breaker.record_failure("still down")
    state = breaker.state()
    assert state["state"] == "open" and state["retry_in_s"] == 10
    assert state["last_error"] == "still down" and state["times_opened"] == 2


def test_an_unused_probe_can_be_given_back() -> None:
    clock = Clock()
    breaker = CircuitBreaker(1, 0, clock=clock)
    breaker.record_failure()
    assert breaker.allow()
    breaker.release()
    assert breaker.allow()
