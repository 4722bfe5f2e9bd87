"""Rules, recall and the prompt preview through the running gateway; what reaches upstream."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest

from beliefs.model.models import Belief, utcnow
from tests.fakes.upstream import FakeUpstream
from tests.proxy.conftest import BOTH_BACKENDS, Gateway

gateway_backend = BOTH_BACKENDS  # these tests run on DuckDB and on PostgreSQL

USER = "dana"
HEADERS = {"X-Tenure-User": USER, "X-Tenure-Scope": "domain:code,domain:docs"}


def b(bid: str, name: str, aliases: list[str], **fields: Any) -> Belief:
    values: dict[str, Any] = {
        "id": bid,
        "user_id": USER,
        "canonical_name": name,
        "aliases": aliases,
        "content": f"About {name}.",
        "scope": ["domain:code"],
    }
    values.update(fields)
    return Belief(**values)


def corpus() -> list[Belief]:
    filler = [b(f"f{i}", f"unrelated_{i}", [f"filler{i}"]) for i in range(40)]
    return [
        *filler,
        b("kafka", "kafka_streams", ["kafka"]),
        b("manual", "kafka_manual", ["kafka"], delivery="on_demand"),
        b("rejected", "kafka_rejected", ["kafka"], review_state="rejected"),
        b("expired", "kafka_old_note", ["kafka"], expires_at=utcnow() - timedelta(hours=1)),
        b("imported", "kafka_import", ["kafka"], source_type="import"),
        b("doc", "kafka_runbook", ["kafka"], scope=["domain:docs"]),
    ]


@pytest.fixture
def gw(make_gateway: Callable[..., Gateway]) -> Gateway:
    return make_gateway(beliefs=corpus(), inject_min_trust=2)


def chat(gw: Gateway, text: str) -> httpx.Response:
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": text}]}
    return httpx.post(gw.v1 + "/chat/completions", json=body, headers=HEADERS)


def test_gated_beliefs_never_reach_upstream_but_recall_finds_them(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    assert chat(gw, "how do we run kafka?").status_code == 200
    sent = upstream.last("/chat/completions").json["messages"][-1]["content"]
    assert "[kafka]" in sent and "[doc]" in sent
    for hidden in ("[manual]", "[rejected]", "[expired]", "[imported]"):
        assert hidden not in sent
    resp = httpx.get(gw.url + "/api/recall", params={"user": USER, "query": "kafka"})
    assert resp.status_code == 200
    tags = {h["id"]: h.get("tags", []) for h in resp.json()["hits"]}
    assert tags["manual"] == ["on_demand"] and tags["rejected"] == ["rejected"]
    assert tags["expired"] == ["expired"] and tags["imported"] == []


def test_document_scope_hits_are_grouped_under_a_source_template(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    chat(gw, "kafka runbook please")
    sent = upstream.last("/chat/completions").json["messages"][-1]["content"]
    assert sent.count("(SOURCE)") == 1 and "##### Sources" in sent and "domain:docs" in sent
    assert sent.index("(SOURCE)") < sent.index("[doc]")
    assert "(stored " in sent and "trust: operator" in sent


def test_preview_is_exactly_what_the_proxy_sends(gw: Gateway, upstream: FakeUpstream) -> None:
    query = "how do we run kafka?"
    preview = httpx.get(
        gw.url + "/api/prompts/preview",
        params={
            "user": USER,
            "scope": "domain:code,domain:docs",
            "model": "gpt-4o",
            "query": query,
        },
    )
    assert preview.status_code == 200, preview.text
    data = preview.json()
    chat(gw, query)
    assert upstream.last("/chat/completions").json["messages"] == data["messages"]
    assert data["chars"] == len(data["system_block"]) + len(data["user_block"])
    assert data["budget"]["limit_tokens"] >= 1024 and data["budget"]["used_tokens"] > 0
    assert {h["id"] for h in data["relevant"]} == {"kafka", "doc"}


def test_preview_reports_what_the_budget_shed(make_gateway: Callable[..., Gateway]) -> None:
    gw = make_gateway(beliefs=corpus(), max_beliefs=1)
    data = httpx.get(
        gw.url + "/api/prompts/preview",
        params={"user": USER, "scope": "domain:code", "query": "kafka"},
    ).json()
    assert len(data["relevant"]) == 1
    assert {s["reason"] for s in data["budget"]["shed"]} == {"max_beliefs"}


def test_rules_crud_and_bonus_reorders_hits(gw: Gateway, upstream: FakeUpstream) -> None:
    api = gw.url + "/api/rules"
    before = httpx.get(api).json()
    assert {"user:universal", "project:*", "domain:docs", "domain:scratch"} <= {
        r["pattern"] for r in before
    }
    created = httpx.post(api, json={"pattern": "domain:code", "bonus": 0.6, "template": "Code:"})
    assert created.status_code == 201 and created.json()["warnings"]
    rule_id = created.json()["id"]
    edited = httpx.patch(f"{api}/{rule_id}", json={"bonus": 0.25})
    assert edited.status_code == 200 and edited.json()["warnings"] == []
    chat(gw, "kafka please")
    sent = upstream.last("/chat/completions").json["messages"][-1]["content"]
    assert sent.index("[kafka]") < sent.index("[doc]") and sent.count("Code:") == 1
    assert httpx.delete(f"{api}/{rule_id}").status_code == 204
    assert httpx.delete(f"{api}/{rule_id}").status_code == 404


def test_rule_and_recall_input_errors_name_the_field(gw: Gateway) -> None:
    api = gw.url + "/api/rules"
    bad = httpx.post(api, json={"pattern": "domain:x", "bonus": "lots"})
    assert bad.status_code == 400 and "bonus" in bad.text
    assert httpx.post(api, json={"pattern": "x", "colour": 1}).status_code == 400
    for field, wrong in (("bonus", True), ("bonus", "0.2"), ("template", 5), ("pattern", None)):
        for resp in (
            httpx.post(api, json={"pattern": "domain:x", field: wrong}),
            httpx.patch(api + "/r-default-docs", json={field: wrong}),
        ):
            assert resp.status_code == 400 and resp.json()["error"]["field"] == field, resp.text
    cleared = httpx.patch(api + "/r-default-docs", json={"template": None, "memory_class": None})
    assert cleared.status_code == 200
    assert (cleared.json()["template"], cleared.json()["memory_class"]) == (None, None)
    assert httpx.post(api, content=b"[1,2]").status_code == 400
    assert httpx.patch(api + "/r-nope", json={"bonus": 0.1}).status_code == 404
    missing = httpx.get(gw.url + "/api/recall")
    assert missing.status_code == 400 and "query" in missing.text
    scope = httpx.get(gw.url + "/api/recall", params={"query": "k", "scope": "nonsense"})
    assert scope.status_code == 400 and "nonsense" in scope.text


def test_a_belief_written_with_an_expiry_stops_reaching_upstream(
    gw: Gateway, upstream: FakeUpstream
) -> None:
    body = {
        "user_id": USER,
        "canonical_name": "zookeeper_quorum",
        "aliases": ["zookeeper"],
        "content": "The zookeeper quorum is five nodes until the migration.",
        "scope": ["domain:code"],
        "expires_in_days": 1,
    }
    created = httpx.post(gw.url + "/api/beliefs", json=body)
    assert created.status_code == 201, created.text
    belief_id = created.json()["id"]
    chat(gw, "how big is the zookeeper quorum?")
    assert f"[{belief_id}]" in upstream.last("/chat/completions").json["messages"][-1]["content"]
    # The day passes: move the stored expiry into the past rather than wait for it.
    past = utcnow() - timedelta(seconds=1)
    gw.on_store(lambda s: s.update(belief_id, {"expires_at": past}))
    chat(gw, "how big is the zookeeper quorum?")
    sent = upstream.last("/chat/completions").json["messages"][-1]["content"]
    assert belief_id not in sent and "five nodes" not in sent
    found = httpx.get(gw.url + "/api/recall", params={"user": USER, "query": "zookeeper"})
    hits = {h["id"]: h.get("tags", []) for h in found.json()["hits"]}
    assert hits == {belief_id: ["expired"]}
