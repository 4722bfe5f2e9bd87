"""End to end: turns through the real gateway become beliefs via the stand-in provider."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from beliefs.model.models import Belief
from beliefs.store.belief_store import BeliefStore
from tests.extractor.fake_llm import extraction, new_belief, update
from tests.fakes.upstream import Chat, FakeUpstream, Recorded
from tests.proxy.conftest import BOTH_BACKENDS, Gateway

gateway_backend = BOTH_BACKENDS  # these tests run on DuckDB and on PostgreSQL

HEADERS = {"X-Tenure-User": "alice", "X-Tenure-Scope": "project:billing"}
SECRET = "sk-proj-Zx9aQ2mP7rT4wL8kN3vB0000"


def is_extraction(rec: Recorded) -> bool:
    return isinstance(rec.json, dict) and "response_format" in rec.json


def is_chat(rec: Recorded) -> bool:
    return not is_extraction(rec)


def extraction_reply(payload: dict[str, Any] | str, delay: float = 0.0) -> Chat:
    content = payload if isinstance(payload, str) else json.dumps(payload)
    return Chat(content=content, match=is_extraction, delay=delay)


def chat(gateway: Gateway, text: str) -> dict[str, Any]:
    response = httpx.post(
        f"{gateway.v1}/chat/completions",
        headers=HEADERS,
        json={"model": "stand-in-model", "messages": [{"role": "user", "content": text}]},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def jobs(gateway: Gateway, status: str | None = None) -> list[dict[str, Any]]:
    params = {"status": status} if status else {}
    response = httpx.get(f"{gateway.url}/api/jobs", params=params, timeout=10)
    assert response.status_code == 200, response.text
    result: list[dict[str, Any]] = response.json()
    return result


def wait_jobs(gateway: Gateway, n: int, status: str = "done") -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def ready() -> bool:
        nonlocal found
        found = jobs(gateway, status)
        return len(found) >= n

    gateway.settle(ready, timeout=60)
    return found


def live(gateway: Gateway) -> list[Any]:
    beliefs = gateway.on_store(lambda s: s.list(user_id="alice"))
    return [b for b in beliefs if not b.canonical_name.startswith("other_topic")]


@pytest.fixture
def extracting(make_gateway: Callable[..., Gateway]) -> Gateway:
    return make_gateway(extract_workers=1, extract_backoff_s=0.05, extract_max_attempts=2)


# BM25 needs a corpus: in a store of one belief no term is rare enough to pass the minimum score.
OTHER_BELIEFS = [
    Belief(user_id="alice", canonical_name=f"other_topic_{n}", content="x", scope=["domain:misc"])
    for n in range(8)
]


def test_a_turn_becomes_a_belief_the_next_request_retrieves(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    extracting = make_gateway(beliefs=OTHER_BELIEFS, extract_workers=1)
    upstream.queue(
        extraction_reply(
            extraction(
                new_beliefs=[
                    new_belief(
                        "database_driver",
                        "Uses the raw MongoDB driver, not Mongoose.",
                        why_it_matters="Write data access with the raw driver; never Mongoose.",
                        aliases=["mongo driver"],
                        rejected_alternatives=["mongoose"],
                    )
                ]
            )
        )
    )
    chat(extracting, "We use the raw MongoDB driver. Never Mongoose.")
    [job] = wait_jobs(extracting, 1)
    [belief] = live(extracting)
    assert job["written_ids"] == [belief.id]
    assert belief.rejected_alternatives == ["mongoose"] and belief.aliases == ["mongo driver"]
    assert belief.why_it_matters.startswith("Write data access")
    assert belief.review_state == "pending" and belief.source_type == "extracted"
    # The extraction went to the turn's own model at the upstream, with the schema.
    request = next(r for r in upstream.requests if is_extraction(r)).json
    assert request["model"] == "stand-in-model"
    assert request["response_format"]["type"] == "json_schema"

    upstream.queue(extraction_reply(extraction()))
    chat(extracting, "Suggest a good Mongoose schema for invoices")
    forwarded = next(r for r in reversed(upstream.requests) if is_chat(r)).json
    assert "Uses the raw MongoDB driver" in json.dumps(forwarded["messages"])
    [_, second] = sorted(wait_jobs(extracting, 2), key=lambda j: j["created_at"])
    # ...and the next extraction saw it as a known belief, without the injected block.
    prompt = next(r for r in reversed(upstream.requests) if is_extraction(r)).json["messages"]
    assert belief.id in prompt[-1]["content"] and "tenure-memory" not in prompt[-1]["content"]
    assert second["turn"]["injected_ids"] == [belief.id]


def test_a_later_turn_supersedes_by_canonical_name(
    extracting: Gateway, upstream: FakeUpstream
) -> None:
    upstream.queue(
        extraction_reply(extraction(new_beliefs=[new_belief("cache_store", "Uses Redis.")])),
        extraction_reply(
            extraction(
                belief_updates=[
                    update(
                        "superseded",
                        canonical_name="cache_store",
                        new_content="Uses Valkey.",
                        reason="moved to Valkey",
                    )
                ]
            )
        ),
    )
    chat(extracting, "Our cache is Redis.")
    wait_jobs(extracting, 1)
    [old] = live(extracting)
    chat(extracting, "We moved the cache from Redis to Valkey.")
    wait_jobs(extracting, 2)
    [head] = live(extracting)
    assert head.content == "Uses Valkey."
    chain = httpx.get(f"{extracting.url}/api/beliefs/{head.id}/chain", timeout=10).json()
    assert [b["id"] for b in chain] == [old.id, head.id]
    assert chain[0]["superseded_by"] == head.id
    assert chain[0]["invalidation_reason"] == "moved to Valkey"


def test_a_contradiction_opens_a_conflict_resolvable_over_the_api(
    extracting: Gateway, upstream: FakeUpstream
) -> None:
    upstream.queue(
        extraction_reply(extraction(new_beliefs=[new_belief("editor", "Uses Vim.")])),
        extraction_reply(
            extraction(
                belief_updates=[
                    update("contradicted", canonical_name="editor", new_content="Uses Emacs.")
                ]
            )
        ),
    )
    chat(extracting, "I edit in Vim.")
    wait_jobs(extracting, 1)
    chat(extracting, "I edit in Emacs.")
    wait_jobs(extracting, 2)
    [vim] = live(extracting)
    assert vim.content == "Uses Vim."
    [conflict] = httpx.get(f"{extracting.url}/api/conflicts?status=open", timeout=10).json()
    assert conflict["existing_id"] == vim.id and conflict["proposed"]["content"] == "Uses Emacs."

    url = f"{extracting.url}/api/conflicts/{conflict['id']}/resolve"
    bad = httpx.post(url, json={"resolution": "merge"}, timeout=10)
    assert bad.status_code == 400
    assert "resolution" in bad.text and "keep_existing, take_new, keep_both" in bad.text
    missing = httpx.post(
        f"{extracting.url}/api/conflicts/c-nope/resolve", json={"resolution": "take_new"}
    )
    assert missing.status_code == 404
    wrong_status = httpx.get(f"{extracting.url}/api/conflicts?status=closed", timeout=10)
    assert wrong_status.status_code == 400 and "open, resolved" in wrong_status.text

    done = httpx.post(url, json={"resolution": "take_new"}, timeout=10)
    assert done.status_code == 200 and done.json()["status"] == "resolved"
    [head] = live(extracting)
    assert head.content == "Uses Emacs." and head.id == done.json()["new_id"]
    assert extracting.on_store(lambda s: s.get(vim.id).superseded_by) == head.id


def test_a_secret_reaches_neither_the_extraction_prompt_nor_the_store(
    extracting: Gateway, upstream: FakeUpstream
) -> None:
    upstream.queue(
        extraction_reply(
            extraction(new_beliefs=[new_belief("deploy_key", f"Deploys with {SECRET}.")])
        )
    )
    chat(extracting, f"Deploy with api key {SECRET} and password=hunter22 please")
    wait_jobs(extracting, 1)
    sent = next(r for r in upstream.requests if is_extraction(r)).body.decode()
    assert SECRET not in sent and "hunter22" not in sent and "[REDACTED]" in sent

    def dump(store: BeliefStore) -> str:
        tables = store.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
        return "".join(str(store.execute(f'SELECT * FROM "{t}"').fetchall()) for (t,) in tables)

    everything = extracting.on_store(dump)
    assert SECRET not in everything and "hunter22" not in everything
    [belief] = live(extracting)
    assert "[REDACTED]" in belief.content


def test_garbage_output_fails_the_job_keeps_the_raw_text_and_can_be_retried(
    extracting: Gateway, upstream: FakeUpstream
) -> None:
    upstream.queue(
        extraction_reply("I think the user likes Redis?"),
        extraction_reply("Still not JSON, sorry"),
    )
    chat(extracting, "We use Redis.")
    [job] = wait_jobs(extracting, 1, status="failed")
    assert "I think the user likes Redis?" in job["raw_output"]
    assert "Still not JSON" in job["raw_output"]
    assert "invalid output" in job["last_error"]
    assert live(extracting) == []
    health = httpx.get(f"{extracting.url}/healthz", timeout=10).json()
    assert health["extractor"]["state"] == "closed"

    upstream.queue(extraction_reply(extraction(new_beliefs=[new_belief("cache", "Redis.")])))
    retried = httpx.post(f"{extracting.url}/api/jobs/{job['id']}/retry", timeout=10)
    assert retried.status_code == 200 and retried.json()["status"] == "pending"
    wait_jobs(extracting, 1, status="done")
    assert [b.canonical_name for b in live(extracting)] == ["cache"]
    again = httpx.post(f"{extracting.url}/api/jobs/{job['id']}/retry", timeout=10)
    assert again.status_code == 409
    assert httpx.post(f"{extracting.url}/api/jobs/j-nope/retry").status_code == 404
    assert httpx.get(f"{extracting.url}/api/jobs?status=stuck").status_code == 400


def test_an_anthropic_turn_is_extracted_through_the_messages_api(
    extracting: Gateway, upstream: FakeUpstream
) -> None:
    def is_tool_extraction(rec: Recorded) -> bool:
        tools = rec.json.get("tools") if isinstance(rec.json, dict) else None
        return bool(tools) and tools[0]["name"] == "json_tool_call"

    payload = extraction(new_beliefs=[new_belief("editor", "Uses Helix.")])
    upstream.queue(
        Chat(
            tool_calls=[{"id": "t1", "name": "json_tool_call", "arguments": json.dumps(payload)}],
            match=is_tool_extraction,
        )
    )
    response = httpx.post(
        f"{extracting.url}/v1/messages",
        headers=HEADERS,
        json={
            "model": "claude-x",
            "max_tokens": 100,
            "messages": [{"role": "user", "content": "I edit everything in Helix."}],
        },
        timeout=10,
    )
    assert response.status_code == 200, response.text
    wait_jobs(extracting, 1)
    [belief] = live(extracting)
    assert belief.content == "Uses Helix."
    request = next(r for r in upstream.requests if is_tool_extraction(r))
    assert request.path == "/v1/messages" and request.json["model"] == "claude-x"


def test_no_corpus_secret_reaches_the_database_the_model_or_the_log(
    make_gateway: Callable[..., Gateway],
    upstream: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    import logging

    import litellm  # imported here, not on the gateway's loop mid-test (seconds on a busy machine)

    from tests.extractor import secret_corpus, secret_corpus_general

    SECRETS = secret_corpus.SECRETS + secret_corpus_general.SECRETS

    caplog.set_level(logging.DEBUG)
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        caplog.set_level(logging.DEBUG, logger=name)
    litellm.set_verbose = True  # LiteLLM's own debug printing, as LITELLM_LOG=DEBUG gives
    gateway = make_gateway(beliefs=OTHER_BELIEFS, extract_workers=1, log_level="debug")
    secrets = [case.secret for case in SECRETS]
    pasted = "\n".join(case.line for case in SECRETS)
    upstream.queue(
        extraction_reply(
            extraction(new_beliefs=[new_belief("deploy_secrets", f"Uses {SECRETS[3].line}.")])
        )
    )
    response = httpx.post(
        f"{gateway.v1}/chat/completions",
        headers=HEADERS,
        json={"model": "stand-in-model", "messages": [{"role": "user", "content": pasted}]},
        timeout=10,
    )
    assert response.status_code == 200
    wait_jobs(gateway, 1)
    extraction_calls = [r.body.decode() for r in upstream.requests if is_extraction(r)]
    assert extraction_calls

    def dump(store: BeliefStore) -> str:
        tables = store.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
        return "".join(str(store.execute(f'SELECT * FROM "{t}"').fetchall()) for (t,) in tables)

    stored = gateway.on_store(dump)
    logged = caplog.text + "".join(capfd.readouterr())
    litellm.set_verbose = False
    assert "[REDACTED]" in logged  # LiteLLM's debug log did show the (redacted) prompt
    for secret in secrets:
        assert secret not in stored, secret
        assert all(secret not in call for call in extraction_calls), secret
        assert secret not in logged, secret
