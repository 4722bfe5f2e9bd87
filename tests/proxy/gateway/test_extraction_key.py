"""A rejected key on the extraction call is a configuration fact: said at once, naming the
setting, shown as degraded, and not retried or counted against the breaker like an outage."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from proxy.cli.jobs import _pickup
from proxy.runtime import warn_if_keyless
from proxy.settings import Settings
from tests.fakes.upstream import FakeUpstream, Raw
from tests.proxy.conftest import Gateway
from tests.proxy.gateway.test_extraction import chat, wait_jobs
from tests.proxy.gateway.test_extraction_crash import is_extraction

REJECTED = json.dumps(
    {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
).encode()


def test_a_rejected_key_degrades_health_and_names_the_setting(
    make_gateway: Callable[..., Gateway],
    upstream: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    upstream.queue(*(Raw(status=401, body=REJECTED, match=is_extraction) for _ in range(2)))
    gateway = make_gateway(extract_workers=1)
    with caplog.at_level(logging.ERROR, logger="tenure.extractor"):
        chat(gateway, "We deploy on Fridays.")
        [job] = wait_jobs(gateway, 1, status="failed")
    assert job["attempts"] == 1  # parked at once, not retried like an outage
    assert "TENURE_UPSTREAM_API_KEY" in job["last_error"]
    logged = [r.getMessage() for r in caplog.records if r.name == "tenure.extractor"]
    assert any("TENURE_EXTRACT_API_KEY" in line for line in logged), logged

    health = httpx.get(f"{gateway.url}/healthz", timeout=10)
    assert health.status_code == 200  # the proxy itself still answers
    body = health.json()
    assert body["status"] == "degraded"
    assert any("TENURE_EXTRACT_API_KEY" in r for r in body["reasons"]), body["reasons"]
    assert body["extractor"]["state"] == "closed"
    assert body["extractor"]["consecutive_failures"] == 0
    page = httpx.get(f"{gateway.url}/status", timeout=10).text
    assert "degraded" in page and "TENURE_UPSTREAM_API_KEY" in page

    # `tenure jobs retry` promises no quick pickup while the key is still wrong.
    said = _pickup(body["extractor"])
    assert "within a second" not in said and "TENURE_EXTRACT_API_KEY" in said


@pytest.mark.parametrize(
    ("values", "warned"),
    [
        ({"upstream_url": "https://api.openai.com/v1"}, True),
        ({"upstream_url": "https://api.openai.com/v1", "upstream_api_key": "sk-x"}, False),
        ({"upstream_url": "https://api.openai.com/v1", "extract_api_key": "sk-x"}, False),
        ({"upstream_url": "http://127.0.0.1:11434/v1"}, False),  # a local server needs none
    ],
)
def test_start_up_warns_when_extraction_has_no_key(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, values: dict[str, str], warned: bool
) -> None:
    settings = Settings.load(environ={"TENURE_HOME": str(tmp_path)}, **values)
    with caplog.at_level(logging.WARNING, logger="tenure.proxy"):
        warn_if_keyless(settings)
    said = " ".join(r.getMessage() for r in caplog.records)
    assert ("TENURE_UPSTREAM_API_KEY" in said) is warned
