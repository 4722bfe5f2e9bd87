"""Compaction through the gateway: a conversation's new name becomes an alias the next turn uses."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx

from beliefs.model.models import Belief
from tests.compaction.conftest import review
from tests.fakes.upstream import Chat, FakeUpstream, Recorded
from tests.proxy.conftest import BOTH_BACKENDS, Gateway

gateway_backend = BOTH_BACKENDS  # these tests run on DuckDB and on PostgreSQL

HEADERS = {"X-Tenure-User": "alice", "X-Tenure-Scope": "domain:code"}
K8S = Belief(
    id="b-k8s",
    user_id="alice",
    canonical_name="kubernetes",
    aliases=["k8s"],
    content="Deploys every service on Kubernetes.",
    scope=["domain:code"],
    source_type="extracted",
)
TABS = Belief(
    id="b-tabs",
    user_id="alice",
    canonical_name="tabs_indentation",
    content="Indents code with tabs.",
    why_it_matters="Indent every code example with tabs.",
    scope=["user:universal"],
)


def is_review(rec: Recorded) -> bool:
    return isinstance(rec.json, dict) and "response_format" in rec.json


def is_chat(rec: Recorded) -> bool:
    return not is_review(rec)


def chat(gw: Gateway, text: str) -> None:
    response = httpx.post(
        f"{gw.v1}/chat/completions",
        headers=HEADERS,
        json={"model": "stand-in-model", "messages": [{"role": "user", "content": text}]},
        timeout=10,
    )
    assert response.status_code == 200, response.text


def test_the_cluster_thing_through_the_gateway(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[K8S, TABS], compaction_model="openai/stand-in-model")
    upstream.queue(Chat(content="Kubernetes evicts pods under memory pressure.", match=is_chat))
    chat(gw, "The cluster thing keeps evicting my pods again, any idea why?")
    gw.settle(lambda: bool(gw.rows("SELECT id FROM jobs")))

    reply = review(
        aliases=[{"belief_id": "b-k8s", "aliases": ["the cluster thing"], "evidence": "x"}]
    )
    upstream.queue(Chat(content=json.dumps(reply), match=is_review))
    run = httpx.post(f"{gw.url}/api/compaction/run", json={"user": "alice"}, timeout=30)
    assert run.status_code == 200, run.text
    assert run.json()["aliased"] == 1 and run.json()["trigger"] == "api"
    review_request = next(r for r in upstream.requests if is_review(r)).json
    assert "The cluster thing keeps evicting" in review_request["messages"][-1]["content"]

    upstream.queue(Chat(content="Check the ingress.", match=is_chat))
    chat(gw, "how do I restart the cluster thing")
    forwarded = next(r for r in reversed(upstream.requests) if is_chat(r)).json
    assert "b-k8s" in forwarded["messages"][-1]["content"]

    bad = httpx.post(f"{gw.url}/api/compaction/run", json={"scope": "code"}, timeout=10)
    assert bad.status_code == 400 and "'code'" in bad.json()["error"]["message"]
    runs = httpx.get(f"{gw.url}/api/compaction/runs", timeout=10).json()
    assert [r["id"] for r in runs["runs"]] == [run.json()["id"]]
    assert runs["scheduler"]["interval_s"] == 1800.0 and runs["scheduler"]["running"] is False


def test_persona_is_generated_injected_and_editable(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[K8S, TABS])
    api = f"{gw.url}/api/persona"
    shown = httpx.get(api, params={"user": "alice"}, timeout=10).json()
    assert shown["text"].startswith("You indent code with tabs.")
    chat(gw, "hello")
    system = next(r for r in reversed(upstream.requests) if is_chat(r)).json["messages"][0]
    assert "About the user: You indent code with tabs." in system["content"]
    gw.call(gw.runtime.persona.wait())
    stored = httpx.get(api, params={"user": "alice"}, timeout=10).json()
    assert stored["stored"] and stored["source"] == "deterministic" and not stored["stale"]

    put = httpx.put(api, params={"user": "alice"}, json={"text": "You are Alice."}, timeout=10)
    assert put.status_code == 200 and put.json()["source"] == "operator"
    again = httpx.post(f"{api}/regenerate", params={"user": "alice"}, timeout=10).json()
    assert again["text"] == "You are Alice."
    chat(gw, "hello again")
    system = next(r for r in reversed(upstream.requests) if is_chat(r)).json["messages"][0]
    assert "About the user: You are Alice." in system["content"]
    bad = httpx.put(api, params={"user": "alice"}, json={"text": ""}, timeout=10)
    assert bad.status_code == 400 and "text" in bad.json()["error"]["message"]
