"""Upstream errors, unreachable and slow upstreams, bad input and client disconnects."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.fakes.upstream import Chat, FakeUpstream, Raw
from tests.proxy import beliefs_seed as seed
from tests.proxy.conftest import Gateway, no_request_to

ALICE = {"X-Tenure-User": seed.USER, "X-Tenure-Scope": "domain:code"}
BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Which pg version?"}]}


@pytest.fixture
def gw(make_gateway: Callable[..., Gateway]) -> Gateway:
    return make_gateway(beliefs=seed.ALL)


def post(gw: Gateway, body: Any = BODY, **kwargs: Any) -> httpx.Response:
    kwargs.setdefault("headers", ALICE)
    if isinstance(body, bytes):
        return httpx.post(gw.v1 + "/chat/completions", content=body, **kwargs)
    return httpx.post(gw.v1 + "/chat/completions", json=body, **kwargs)


def store_state(gw: Gateway) -> tuple[Any, ...]:
    beliefs = gw.rows("SELECT count(*), max(updated_at) FROM beliefs")[0]
    jobs = gw.rows("SELECT count(*) FROM jobs")[0][0]
    return (*beliefs, jobs, gw.rows("SELECT count(*) FROM injections")[0][0])


def test_rate_limit_passes_through_with_headers(gw: Gateway, upstream: FakeUpstream) -> None:
    error = {"error": {"message": "slow down", "type": "rate_limit_error", "code": "rate"}}
    headers = {
        "Content-Type": "application/json",
        "Retry-After": "7",
        "X-RateLimit-Remaining-Requests": "0",
        "X-RateLimit-Reset-Requests": "7s",
    }
    upstream.queue(Raw(status=429, body=json.dumps(error).encode(), headers=headers))
    before = store_state(gw)
    resp = post(gw)
    assert resp.status_code == 429
    assert resp.content == bytes(upstream.last().sent)
    assert resp.headers["retry-after"] == "7"
    assert resp.headers["x-ratelimit-remaining-requests"] == "0"
    assert resp.headers["x-ratelimit-reset-requests"] == "7s"
    assert resp.headers["x-tenure-request-id"].startswith("req_")

    upstream.queue(Raw(status=429, body=json.dumps(error).encode(), headers=headers))
    sdk = gw.openai()
    with pytest.raises(openai.RateLimitError) as caught:
        sdk.chat.completions.create(extra_headers=ALICE, **BODY)  # type: ignore[call-overload]
    assert caught.value.message.endswith("slow down")
    gw.settle()
    assert store_state(gw) == before  # no job for a failed exchange


def test_server_error_passes_through(gw: Gateway, upstream: FakeUpstream) -> None:
    upstream.queue(Raw(status=500, body=b'{"error": {"message": "boom"}}'))
    resp = post(gw)
    assert (resp.status_code, resp.json()) == (500, {"error": {"message": "boom"}})


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_upstream_is_502(make_gateway: Callable[..., Gateway]) -> None:
    gw = make_gateway(upstream_url=f"http://127.0.0.1:{_closed_port()}/v1")
    resp = post(gw)
    assert resp.status_code == 502
    error = resp.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["code"] == "upstream_unreachable" and "TENURE_UPSTREAM_URL" in error["message"]
    assert resp.headers["x-tenure-request-id"].startswith("req_")
    health = httpx.get(gw.url + "/healthz").json()
    assert health["counters"]["upstream_unreachable"] == 1
    # Anthropic clients get the same envelope, wrapped the way their SDK reads it.
    body = {"model": "claude", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    resp = httpx.post(gw.v1 + "/messages", json=body)
    assert resp.status_code == 502 and resp.json()["type"] == "error"


def test_slow_upstream_is_504(make_gateway: Callable[..., Gateway], upstream: FakeUpstream) -> None:
    gw = make_gateway(beliefs=seed.ALL, upstream_timeout=0.3)
    upstream.queue(Chat(delay=3))
    before = store_state(gw)
    resp = post(gw)
    assert resp.status_code == 504
    assert resp.json()["error"]["code"] == "upstream_timeout"
    gw.settle()
    assert store_state(gw) == before


@pytest.mark.parametrize(
    ("body", "param", "fragment"),
    [
        (b'{"model": "x", "messages": [', None, "not valid JSON"),
        (b"[1, 2]", None, "must be a JSON object"),
        ({"model": "x", "messages": "hello"}, "messages", "'messages' must be a list"),
        ({"model": "x", "messages": [], "stream": "yes"}, "stream", "'stream' must be a boolean"),
        ({"messages": []}, "model", "'model' is required"),
        ({"model": "x", "messages": ["hi"]}, "messages[0]", "must be an object"),
        ({"model": "x", "messages": [], "user": 5}, "user", "'user' must be a string"),
    ],
)
def test_bad_input_is_400_naming_the_field(
    gw: Gateway, upstream: FakeUpstream, body: Any, param: str | None, fragment: str
) -> None:
    with no_request_to(upstream):
        resp = post(gw, body, headers={"content-type": "application/json"})
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert error["param"] == param and fragment in error["message"]


def test_body_over_the_limit_is_413(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(max_body_bytes=4096)
    big = {"model": "x", "messages": [{"role": "user", "content": "x" * 10_000}]}
    with no_request_to(upstream):
        resp = post(gw, big)
        assert resp.status_code == 413
        assert "TENURE_MAX_BODY_BYTES" in resp.json()["error"]["message"]

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted while reading
            data = json.dumps(big).encode()
            for i in range(0, len(data), 1000):
                yield data[i : i + 1000]

        resp = httpx.post(gw.v1 + "/chat/completions", content=chunks())
        assert resp.status_code == 413


def test_disconnect_while_waiting_cancels_upstream_call(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    upstream.queue(Chat(delay=5))
    with pytest.raises(httpx.ReadTimeout):
        post(gw, timeout=0.5)
    assert upstream.hung_up.wait(3), "the upstream call was not cancelled"
    gw.settle()
    assert gw.rows("SELECT count(*) FROM jobs")[0][0] == 0


def test_disconnect_mid_stream_cancels_and_keeps_the_partial_turn(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    upstream.queue(Chat(content="one two three four five six", chunk_delay=0.4))
    started = time.monotonic()
    with (
        httpx.Client() as http,
        http.stream(
            "POST", gw.v1 + "/chat/completions", json={**BODY, "stream": True}, headers=ALICE
        ) as resp,
    ):
        for chunk in resp.iter_raw():
            if b"one" in chunk:
                break
    assert upstream.hung_up.wait(3), "the upstream stream was not cancelled"
    assert time.monotonic() - started < 2.5
    gw.settle(lambda: gw.rows("SELECT count(*) FROM jobs")[0][0] == 1)
    turn = json.loads(gw.rows("SELECT turn FROM jobs")[0][0])
    assert turn["assistant_message"].startswith("one")
    assert "six" not in turn["assistant_message"]
    assert httpx.get(gw.url + "/healthz").json()["counters"]["client_disconnects"] == 1
