"""The status page in words: counts agree with their nouns, the breaker says what it means."""

from __future__ import annotations

from collections.abc import Callable

from beliefs.model.models import Belief
from tests.proxy.ui.conftest import UI
from tests.proxy.ui.test_pages import text


def test_one_belief_and_a_closed_breaker_read_as_sentences(make_ui: Callable[..., UI]) -> None:
    ui = make_ui(beliefs=[Belief(user_id="u", canonical_name="tabs")], extract_workers=1)
    page = text(ui.client.get("/status").text)
    assert "1 belief in memory" in page and "1 beliefs" not in page
    assert "closed: calls go through no recent failures" in page
    assert "None" not in page and "last_error" not in page and "consecutive_failures" not in page


def test_an_open_breaker_says_calls_wait_and_why(make_ui: Callable[..., UI]) -> None:
    ui = make_ui(extract_workers=1, breaker_threshold=2, breaker_cooldown_s=120)
    workers = ui.runtime.workers
    assert workers is not None
    workers.breaker.record_failure("the model answered 500")
    page = text(ui.client.get("/status").text)
    assert "1 of 2 failures in a row before it opens" in page
    workers.breaker.record_failure("the model answered 500")
    page = text(ui.client.get("/status").text)
    assert "open: calls paused the model failed 2 times in a row; next try in 120 s" in page
    assert "last error: the model answered 500" in page
    assert "0 beliefs in memory" in page
