"""TENURE_UPSTREAM_API_KEY replaces the client's key: a refusal of it says whose key it was."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable

import httpx
import pytest

from tests.fakes.upstream import FakeUpstream, Raw
from tests.proxy.conftest import Gateway

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
REFUSED = json.dumps({"error": {"message": "Incorrect API key provided"}}).encode()


def test_a_refused_upstream_key_is_named_to_the_client_and_in_the_log(
    make_gateway: Callable[..., Gateway],
    upstream: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    gateway = make_gateway(upstream_api_key="sk-wrong")
    upstream.queue(Raw(status=401, body=REFUSED))
    mine = {"Authorization": "Bearer sk-the-clients-own"}
    said = "refused the key in TENURE_UPSTREAM_API_KEY (401)"
    with caplog.at_level(logging.WARNING, logger="tenure.proxy"):
        resp = httpx.post(f"{gateway.v1}/chat/completions", json=BODY, headers=mine, timeout=30)
        # the exchange is counted and logged once the reply has ended, which may be just after
        # the client has it: wait for the line, not a time
        deadline = time.monotonic() + 60
        while not any(said in r.getMessage() for r in caplog.records):
            assert time.monotonic() < deadline, "the refusal was never logged"
            time.sleep(0.01)
    assert resp.status_code == 401
    assert resp.headers["x-tenure-upstream-key"] == "TENURE_UPSTREAM_API_KEY"
    assert upstream.last().headers["authorization"] == "Bearer sk-wrong"


def test_the_providers_server_header_is_not_passed_on(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gateway = make_gateway()
    upstream.queue(Raw(status=200, body=b"{}", headers={"Server": "provider/1.2"}))
    resp = httpx.post(f"{gateway.v1}/chat/completions", json=BODY, timeout=30)
    assert "server" not in resp.headers and "x-tenure-upstream-key" not in resp.headers
