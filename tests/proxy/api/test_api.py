"""The JSON API: beliefs, chains, history, injections and /healthz."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from beliefs.model.models import Belief
from beliefs.store.belief_store import BeliefStore
from tests.fakes.upstream import FakeUpstream
from tests.proxy import beliefs_seed as seed
from tests.proxy.conftest import BOTH_BACKENDS, Gateway

gateway_backend = BOTH_BACKENDS  # these tests run on DuckDB and on PostgreSQL

ALICE = {"X-Tenure-User": seed.USER, "X-Tenure-Scope": "domain:code"}


@pytest.fixture
def gw(make_gateway: Callable[..., Gateway]) -> Gateway:
    gw = make_gateway(beliefs=seed.ALL)
    replacement = Belief(
        id="b-postgres-17",
        user_id=seed.USER,
        canonical_name="postgres_17",
        aliases=["pg"],
        content="Billing moved to PostgreSQL 17.",
        scope=["domain:code"],
    )
    gw.on_store(lambda s: s.supersede("b-postgres", replacement, reason="upgrade"))
    return gw


def ids(resp: httpx.Response) -> list[str]:
    assert resp.status_code == 200, resp.text
    return sorted(b["id"] for b in resp.json())


def test_list_beliefs_with_filters(gw: Gateway) -> None:
    api = gw.url + "/api/beliefs"
    assert ids(httpx.get(api, params={"user": "alice"})) == ["b-novel", "b-postgres-17", "b-tabs"]
    assert ids(httpx.get(api, params={"user": "alice", "include_superseded": "true"})) == [
        "b-novel",
        "b-postgres",
        "b-postgres-17",
        "b-tabs",
    ]
    assert ids(httpx.get(api, params={"scope": "domain:code"})) == [
        "b-bob",
        "b-postgres-17",
        "b-tabs",
    ]
    belief = httpx.get(api, params={"user": "bob"}).json()[0]
    assert {"canonical_name", "aliases", "why_it_matters", "epistemic_status"} <= set(belief)
    resp = httpx.get(api, params={"include_superseded": "maybe"})
    assert resp.status_code == 400
    assert "include_superseded='maybe'" in resp.json()["error"]["message"]


def test_one_belief_its_chain_and_history(gw: Gateway) -> None:
    belief = httpx.get(gw.url + "/api/beliefs/b-postgres").json()
    assert belief["superseded_by"] == "b-postgres-17"
    chain = httpx.get(gw.url + "/api/beliefs/b-postgres-17/chain").json()
    assert [b["id"] for b in chain] == ["b-postgres", "b-postgres-17"]
    history = httpx.get(gw.url + "/api/beliefs/b-postgres/history").json()
    assert next(e["event"] for e in history) == "created"


def test_unknown_id_is_404_naming_it(gw: Gateway) -> None:
    for path in ("/api/beliefs/b-nope", "/api/beliefs/b-nope/chain"):
        resp = httpx.get(gw.url + path)
        assert resp.status_code == 404
        assert "'b-nope'" in resp.json()["error"]["message"]
    resp = httpx.get(gw.url + "/api/nothing-here")
    assert resp.status_code == 404 and resp.json()["error"]["status"] == 404


def test_injection_records_and_filters(gw: Gateway, upstream: FakeUpstream) -> None:
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Which pg version?"}]}
    first = httpx.post(gw.v1 + "/chat/completions", json=body, headers=ALICE)
    httpx.post(gw.v1 + "/chat/completions", json=body, headers={**ALICE, "X-Tenure-User": "bob"})
    api = gw.url + "/api/injections"
    gw.settle(lambda: len(httpx.get(api).json()) == 2)

    request_id = first.headers["x-tenure-request-id"]
    [record] = httpx.get(api, params={"request_id": request_id}).json()
    assert record["user_id"] == "alice" and record["query"] == "Which pg version?"
    assert record["model"] == "gpt-4o" and record["endpoint"] == "chat/completions"
    assert record["layers"]["pinned"] == ["b-tabs"]
    assert "b-postgres-17" in record["layers"]["relevant"]
    assert record["approx_tokens"] > 0
    assert len(record["belief_ids"]) == int(first.headers["x-tenure-injected"])

    assert [r["user_id"] for r in httpx.get(api, params={"user": "bob"}).json()] == ["bob"]
    by_belief = httpx.get(api, params={"belief_id": "b-tabs"}).json()
    assert [r["request_id"] for r in by_belief] == [request_id]
    assert len(httpx.get(api, params={"limit": 1}).json()) == 1
    assert httpx.get(api, params={"limit": "lots"}).status_code == 400


def test_the_query_of_an_injection_record_is_stored_redacted(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    key = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    text = f"Which pg version? Our Stripe key is {key} and DB_PASSWORD=Xk29dkeL0q"
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}
    first = httpx.post(gw.v1 + "/chat/completions", json=body, headers=ALICE)
    assert int(first.headers["x-tenure-injected"]) > 0
    api = gw.url + "/api/injections"
    gw.settle(lambda: len(httpx.get(api).json()) == 1)
    [record] = httpx.get(api).json()
    assert record["query"].startswith("Which pg version?") and "[REDACTED]" in record["query"]
    assert key not in record["query"] and "Xk29dkeL0q" not in record["query"]
    stored = gw.rows("SELECT query FROM injections")
    assert key not in str(stored) and "Xk29dkeL0q" not in str(stored)


def test_healthz_reports_the_extraction_backlog_and_its_age(gw: Gateway) -> None:
    from extractor.turn import Turn

    turn = Turn(
        request_id="r-old", user_id="alice", scopes=["domain:code"], model="m", user_message="hi"
    )
    gw.on_store(lambda s: gw.runtime.jobs.enqueue(turn))
    health = httpx.get(gw.url + "/healthz").json()
    assert health["jobs"]["pending"] == 1 and health["jobs"]["oldest_pending_age_s"] >= 0
    assert health["jobs"]["backlog_max"] == gw.runtime.settings.extract_backlog_max
    assert health["writes"] == {
        "ok": True,
        "reason": "",
        "kept": 0,
        "lost": 0,
        "failing_since": None,
    }
    assert health["reasons"] == []


def test_a_backlog_past_its_threshold_is_degraded_with_its_size_and_age(
    make_gateway: Callable[..., Gateway],
) -> None:
    from extractor.jobs import pending_job
    from extractor.turn import Turn

    gw = make_gateway(extract_backlog_degraded=3, extract_backlog_degraded_age_s=0)
    for n in range(2):
        turn = Turn(request_id=f"r-{n}", user_id="alice", scopes=[], model="m", user_message="hi")
        gw.on_store(lambda s, turn=turn: gw.runtime.jobs.enqueue(turn))
    health = httpx.get(gw.url + "/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"

    gw.on_store(lambda s: gw.runtime.jobs.enqueue(turn))
    health = httpx.get(gw.url + "/healthz")
    body = health.json()
    # Degraded, yet 200: the replica still serves, and a load balancer must keep it.
    assert health.status_code == 200 and body["status"] == "degraded", body
    assert body["jobs"]["pending"] == 3 and body["jobs"]["degraded_at"] == 3
    [reason] = body["reasons"]
    assert "3 job(s) pending" in reason and "TENURE_EXTRACT_BACKLOG_DEGRADED" in reason
    page = httpx.get(gw.url + "/status").text
    assert "extraction backlog is behind" in page

    aged = make_gateway(extract_backlog_degraded=0, extract_backlog_degraded_age_s=60)
    old = Turn(request_id="r-old", user_id="alice", scopes=[], model="m", user_message="hi")
    then = datetime.now(UTC) - timedelta(seconds=90)
    aged.on_store(lambda s: aged.runtime.jobs.insert([pending_job(old, then)]))
    body = httpx.get(aged.url + "/healthz").json()
    assert body["status"] == "degraded" and body["jobs"]["oldest_pending_age_s"] >= 90
    assert "the oldest 90 s old" in body["reasons"][0]


def test_healthz_lists_the_job_leases_on_postgresql_and_null_on_duckdb(gw: Gateway) -> None:
    from datetime import datetime, timedelta

    from extractor.jobs import JobQueue
    from extractor.turn import Turn

    def claim_two(store: BeliefStore) -> None:
        for rid in ("r-mine", "r-theirs"):
            turn = Turn(request_id=rid, user_id="alice", scopes=[], model="m", user_message="hi")
            gw.runtime.jobs.enqueue(turn)
        gw.runtime.jobs.claim()
        JobQueue(store, lease_s=gw.runtime.jobs.lease_s, holder="gw-other").claim()

    gw.on_store(claim_two)
    leases = httpx.get(gw.url + "/healthz").json()["replica"]["job_leases"]
    if gw.store.dialect == "duckdb":
        assert leases is None  # one process owns every job: nothing is leased
        return
    assert gw.store.feed is not None
    assert [(lease["replica"], lease["mine"]) for lease in leases] == [
        (gw.store.feed.origin, True),
        ("gw-other", False),
    ]
    for lease in leases:
        claimed = datetime.fromisoformat(lease["claimed_at"])
        expires = datetime.fromisoformat(lease["lease_expires_at"])
        assert expires - claimed == timedelta(seconds=gw.runtime.jobs.lease_s) > timedelta(0)
        assert lease["expired"] is False and lease["attempt"] == 1
    assert {lease["job_id"] for lease in leases} == {
        row[0] for row in gw.rows("SELECT id FROM jobs WHERE status = 'running'")
    }


def test_healthz(gw: Gateway, upstream: FakeUpstream) -> None:
    httpx.post(
        gw.v1 + "/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
    )
    health = httpx.get(gw.url + "/healthz").json()
    assert health["status"] == "ok" and health["store"]["ok"] is True
    assert health["store"]["beliefs_in_memory"] == 5
    assert health["counters"]["requests"] == 1
    assert {"retrieval_failures", "retrieval_timeouts", "jobs_enqueued"} <= set(health["counters"])


def test_retrieval_past_its_time_limit_sends_what_it_found_in_time(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=seed.ALL, retrieval_timeout_ms=0.001)
    body = {"model": "m", "messages": [{"role": "user", "content": "Which pg version?"}]}
    resp = httpx.post(gw.v1 + "/chat/completions", json=body, headers=ALICE)
    assert resp.status_code == 200
    assert resp.json()["choices"][0]["message"]["content"] == "Hello from the stand-in provider."
    # The standing layers are whole, and the search's first clause is always read: the cut
    # drops later clauses, never the request's memory.
    sent = upstream.last().body.decode()
    assert seed.TABS.content in sent and seed.POSTGRES.content in sent
    assert resp.headers["x-tenure-injected"] == "2"
    assert httpx.get(gw.url + "/healthz").json()["counters"]["retrieval_timeouts"] == 1


def test_pinning_is_not_an_edit(gw: Gateway) -> None:
    """A pin changes delivery: unpinned again, the belief is no more the user's than before."""
    url = f"{gw.url}/api/beliefs/b-postgres-17"
    assert httpx.get(url).json()["user_edited"] is False
    for pinned in (True, False):
        resp = httpx.patch(url, json={"pinned": pinned})
        assert resp.status_code == 200, resp.text
        assert resp.json()["user_edited"] is False
    events = [e["event"] for e in httpx.get(f"{url}/history").json()]
    assert events[-2:] == ["pinned", "unpinned"]
    resp = httpx.patch(url, json={"content": "Billing runs PostgreSQL 17.2."})
    assert resp.json()["user_edited"] is True
