"""The gateway with a local model server for extraction: refusals learned and shown, raw
replies kept on the job page, one model client for the whole process."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from proxy.cli.jobs import _pickup
from tests.fakes.local_model import Behaviour, LocalModel, SeenRequest, empty
from tests.fakes.upstream import FakeUpstream, Raw
from tests.proxy.conftest import Gateway
from tests.proxy.gateway.test_extraction import chat, wait_jobs
from tests.proxy.gateway.test_extraction_crash import is_extraction


@pytest.fixture
def local() -> Iterator[LocalModel]:
    with LocalModel(Behaviour(refuse_json_schema=True, fence=True)) as server:
        yield server


def test_a_refused_mode_shows_on_status_and_the_raw_reply_on_the_job_page(
    make_gateway: Callable[..., Gateway], local: LocalModel
) -> None:
    gateway = make_gateway(
        extract_workers=1, extract_model="openai/local", extract_api_base=local.url
    )
    assert gateway.runtime.workers is not None
    assert gateway.runtime.workers.llm is gateway.runtime.llm  # one client, built once
    chat(gateway, "I always write SQL keywords in upper case.")
    [job] = wait_jobs(gateway, 1)
    assert "Here is the JSON you asked for" in job["raw_output"]  # done jobs keep it too

    health = httpx.get(f"{gateway.url}/healthz", timeout=10).json()
    facts = health["extractor"]["models"]["openai/local"]
    assert facts["mode"] == "json_object" and "json_schema" in facts["refused_modes"]
    assert health["extractor"]["state"] == "closed"
    assert health["extractor"]["consecutive_failures"] == 0

    status = httpx.get(f"{gateway.url}/status", timeout=10).text
    assert "Extraction models" in status and "openai/local" in status
    assert "Input should be" in status  # the server's own words
    page = httpx.get(f"{gateway.url}/status/jobs/{job['id']}", timeout=10)
    assert page.status_code == 200
    raw = re.search(r'<pre class="raw">([\s\S]*?)</pre>', page.text)
    assert raw and "sql_style" in raw.group(1) and "```json" in raw.group(1)
    assert "I always write SQL keywords in upper case." in page.text
    missing = httpx.get(f"{gateway.url}/status/jobs/j-nope", timeout=10)
    assert missing.status_code == 404 and "Job not found" in missing.text


def test_status_gives_a_waiting_job_the_breakers_time_not_its_own(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    upstream.queue(Raw(status=503, body=b"{}", match=is_extraction))
    gateway = make_gateway(
        extract_workers=1, breaker_threshold=1, breaker_cooldown_s=3600, extract_backoff_s=1
    )
    chat(gateway, "We deploy on Fridays.")

    def waiting() -> bool:
        health = httpx.get(f"{gateway.url}/healthz", timeout=10).json()
        return bool(health["extractor"]["state"] == "open" and health["jobs"]["pending"])

    gateway.settle(waiting, timeout=60)
    [job] = httpx.get(f"{gateway.url}/api/jobs", params={"status": "pending"}, timeout=10).json()
    page = httpx.get(f"{gateway.url}/status", timeout=10).text
    assert "next try in" in page
    shown = [
        datetime.strptime(t, "%Y-%m-%d %H:%M") for t in re.findall(r"· next (\S+ \S+) UTC", page)
    ]
    own = datetime.fromisoformat(job["next_attempt_at"]).replace(
        tzinfo=None, second=0, microsecond=0
    )
    # the job's own backoff (seconds) is not shown: it waits for the breaker, an hour away
    assert len(shown) == 1 and shown[0] - own >= timedelta(minutes=50), (shown, own)
    # nor does `tenure jobs retry` promise a pickup "within a second"
    said = _pickup(httpx.get(f"{gateway.url}/healthz", timeout=10).json()["extractor"])
    assert "breaker open" in said and "within a second" not in said


def test_a_base_model_is_shown_unfit_and_its_empty_jobs_suspect(
    make_gateway: Callable[..., Gateway],
) -> None:
    def base_model(seen: SeenRequest) -> dict[str, Any] | None:
        return empty()  # the small-talk example's result, for every turn

    with LocalModel(Behaviour(refuse_json_schema=True), base_model, canary=None) as server:
        gateway = make_gateway(
            extract_workers=1, extract_model="openai/local", extract_api_base=server.url
        )
        chat(gateway, "We deploy with Nomad, not Kubernetes.")
        [job] = wait_jobs(gateway, 1)
    assert job["written_ids"] == [] and "failed the canary" in job["suspect"]

    health = httpx.get(f"{gateway.url}/healthz", timeout=10).json()
    facts = health["extractor"]["models"]["openai/local"]
    assert facts["fit"] is False and "wrote no belief" in facts["fitness"]
    assert health["extractor"]["times_opened"] == 0
    status = httpx.get(f"{gateway.url}/status", timeout=10).text
    assert "unfit: it wrote no belief" in status
    page = httpx.get(f"{gateway.url}/status/jobs/{job['id']}", timeout=10).text
    assert "Suspect" in page and "failed the canary" in page


def test_a_model_that_falls_silent_is_named_with_the_setting_on_status(
    make_gateway: Callable[..., Gateway],
) -> None:
    with LocalModel(Behaviour(stall_after=3)) as server:
        gateway = make_gateway(
            extract_workers=1,
            extract_model="openai/local",
            extract_api_base=server.url,
            extract_timeout=0.5,
            extract_max_attempts=1,
            extract_canary=False,
        )
        chat(gateway, "I always write SQL keywords in upper case.")
        [job] = wait_jobs(gateway, 1, "failed")
    assert "ModelSilent" in job["last_error"] and job["raw_output"]
    health = httpx.get(f"{gateway.url}/healthz", timeout=10).json()
    assert "TENURE_EXTRACT_TIMEOUT" in health["extractor"]["models"]["openai/local"]["fell_silent"]
    assert health["extractor"]["consecutive_failures"] == 0
    status = httpx.get(f"{gateway.url}/status", timeout=10).text
    assert "went silent for 0.5 s" in status and "TENURE_EXTRACT_TIMEOUT" in status
