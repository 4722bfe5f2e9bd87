"""While the index fills at start-up: /healthz says so, proxied requests go without memory at
once, Tenure's own API waits for the full index."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import httpx

from tests.fakes.upstream import FakeUpstream
from tests.proxy import beliefs_seed as seed
from tests.proxy.conftest import Gateway

ALICE = {"X-Tenure-User": seed.USER, "X-Tenure-Scope": "domain:code"}
BODY = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Which pg version?"}]}


def test_requests_are_not_held_while_the_index_loads(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=seed.ALL)
    ready = gw.store.index.ready
    ready.clear()  # as a background load leaves it until the last row is in
    try:
        health = httpx.get(gw.url + "/healthz", timeout=2).json()
        assert health["loading"] is True and health["store"]["loading"] is True
        resp = httpx.post(gw.v1 + "/chat/completions", json=BODY, headers=ALICE, timeout=2)
        assert resp.status_code == 200
        assert resp.headers.get("x-tenure-injected", "0") == "0"
        sent = upstream.requests[-1].json["messages"]
        assert "PostgreSQL" not in str(sent)
        answered: list[int] = []
        api = threading.Thread(
            target=lambda: answered.append(
                httpx.get(gw.url + "/api/beliefs", params={"user": seed.USER}).status_code
            )
        )
        api.start()
        api.join(0.5)
        assert answered == []  # the API waits rather than reading a partial index
    finally:
        ready.set()
    api.join(5)
    assert answered == [200]
    counters = httpx.get(gw.url + "/healthz").json()
    assert counters["loading"] is False
    assert counters["counters"]["memory_skipped_loading"] == 1
    resp = httpx.post(gw.v1 + "/chat/completions", json=BODY, headers=ALICE)
    assert int(resp.headers["x-tenure-injected"]) > 0


def test_a_user_a_bounded_index_does_not_hold_is_read_while_requests_go_on(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    assert seed.ALL[-1].user_id != seed.USER
    # Bound to one belief: the last user written (Bob) is held, Alice's beliefs are not.
    gw = make_gateway(beliefs=seed.ALL, index_max_beliefs=1)
    assert not gw.store.index.held(seed.USER)
    resp = httpx.post(gw.v1 + "/chat/completions", json=BODY, headers=ALICE, timeout=5)
    assert resp.status_code == 200 and resp.headers.get("x-tenure-injected", "0") == "0"
    deadline = time.monotonic() + 120  # a bound for a hang, not a margin
    while not gw.store.index.held(seed.USER) and time.monotonic() < deadline:
        time.sleep(0.02)
    resp = httpx.post(gw.v1 + "/chat/completions", json=BODY, headers=ALICE, timeout=5)
    assert int(resp.headers["x-tenure-injected"]) > 0
    assert "PostgreSQL" in str(upstream.requests[-1].json["messages"])
    store = httpx.get(gw.url + "/healthz").json()["store"]
    assert store["index_bound"] == 1 and store["user_loads"] >= 1
    assert store["user_evictions"] >= 1 and store["users_in_memory"] == 1
    counters = httpx.get(gw.url + "/healthz").json()["counters"]
    assert counters["memory_skipped_loading"] == 1
