"""The belief API through the real app: filters, search, prefix, edits with history, review,
delete and restore, injections, and errors that name the bad field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from beliefs.context.assembly import ContextRequest, assemble
from proxy.gateway.injections import InjectionRecord, save_records
from tests.proxy.ui.conftest import UI


def ids(resp: httpx.Response) -> list[str]:
    assert resp.status_code == 200, resp.text
    return [b["id"] for b in resp.json()]


def error(resp: httpx.Response, status: int) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    err: dict[str, Any] = resp.json()["error"]
    return err


def test_list_filters(ui: UI) -> None:
    get = ui.client.get
    assert sorted(ids(get("/api/beliefs", params={"user": "alice"}))) == [
        "b-guess",
        "b-hostile",
        "b-k8s",
        "b-postgres-17",
        "b-tabs",
    ]
    assert ids(get("/api/beliefs", params={"user": "alice", "pinned": "true"})) == ["b-k8s"]
    assert ids(get("/api/beliefs", params={"review_state": "pending"})) == ["b-guess"]
    assert ids(get("/api/beliefs", params={"agent": "cline"})) == ["b-bob"]
    assert ids(get("/api/beliefs", params={"type": "entity"})) == ["b-k8s"]
    assert ids(get("/api/beliefs", params={"status": "inferred"})) == ["b-guess"]
    assert sorted(ids(get("/api/beliefs", params={"scope": "domain:code", "user": "alice"}))) == [
        "b-guess",
        "b-k8s",
        "b-postgres-17",
    ]
    assert "b-postgres" in ids(get("/api/beliefs", params={"include_superseded": "true"}))
    assert error(get("/api/beliefs", params={"type": "opinion"}), 400)["field"] == "type"
    assert error(get("/api/beliefs", params={"pinned": "maybe"}), 400)["field"] == "pinned"
    assert error(get("/api/beliefs", params={"limit": "-1"}), 400)["field"] == "limit"


def test_search_uses_the_proxy_retrieval_over_names_aliases_and_rejected(ui: UI) -> None:
    get = ui.client.get
    found = get("/api/beliefs", params={"q": "can you write a mysql query", "user": "alice"})
    assert ids(found) == ["b-postgres-17"]  # a rejected alternative finds the decision
    clause = found.json()[0]["match"]["clauses"][0]
    assert clause["field"] == "rejected_alternative" and clause["term"] == "mysql"
    assert found.json()[0]["match"]["score"] >= 3
    assert ids(get("/api/beliefs", params={"q": "deploy it on k8s"})) == ["b-k8s"]
    # without a user, every user's beliefs are searched; the filters still apply
    assert sorted(ids(get("/api/beliefs", params={"q": "pg"}))) == ["b-bob", "b-postgres-17"]
    assert ids(get("/api/beliefs", params={"q": "pg", "agent": "cline"})) == ["b-bob"]
    # superseded beliefs only when asked for
    assert "b-postgres" not in ids(get("/api/beliefs", params={"q": "postgresql"}))
    wide = {"q": "postgresql", "include_superseded": "true", "user": "alice"}
    assert sorted(ids(get("/api/beliefs", params=wide))) == ["b-postgres", "b-postgres-17"]
    assert ids(get("/api/beliefs", params={"q": "nothing like this"})) == []


def test_prefix_mode_for_type_ahead(ui: UI) -> None:
    get = ui.client.get
    found = get("/api/beliefs", params={"q": "kub", "prefix": "true"}).json()
    assert [(b["id"], b["match"]) for b in found] == [
        ("b-k8s", {"field": "canonical_name", "term": "kubernetes"})
    ]
    found = get("/api/beliefs", params={"q": "k8", "prefix": "true"}).json()
    assert found[0]["match"] == {"field": "alias", "term": "k8s"}
    names = ids(get("/api/beliefs", params={"q": "post", "prefix": "true", "user": "alice"}))
    assert names == ["b-postgres-17"]
    limited = get("/api/beliefs", params={"q": "p", "prefix": "true", "limit": "1"})
    assert len(ids(limited)) == 1


def test_create_is_an_operator_belief(ui: UI) -> None:
    body = {
        "canonical_name": "Dark Mode",
        "content": "Prefers dark mode in every tool.",
        "aliases": ["dark theme"],
        "scope": ["user:universal"],
        "user_id": "alice",
    }
    resp = ui.client.post("/api/beliefs", json=body)
    assert resp.status_code == 201, resp.text
    created = resp.json()
    assert created["canonical_name"] == "dark_mode"
    stored = ui.belief(created["id"])
    assert stored.source_type == "operator" and stored.review_state == "confirmed"
    assert stored.user_edited and [e.event for e in stored.change_log] == ["created"]
    # the same name again in the same scope is a clash
    clash = error(ui.client.post("/api/beliefs", json=body), 409)
    assert clash["field"] == "canonical_name" and created["id"] in clash["message"]


def test_create_errors_name_the_field(ui: UI) -> None:
    post = ui.client.post
    assert error(post("/api/beliefs", json={"content": "x"}), 400)["field"] == "canonical_name"
    bad_aliases = {"canonical_name": "x", "aliases": "pg"}
    assert error(post("/api/beliefs", json=bad_aliases), 400)["field"] == "aliases"
    unknown = error(post("/api/beliefs", json={"canonical_name": "x", "colour": "red"}), 400)
    assert unknown["field"] == "colour"
    bad_scope = error(post("/api/beliefs", json={"canonical_name": "x", "scope": ["galaxy"]}), 400)
    assert bad_scope["field"] == "scope" and "galaxy" in bad_scope["message"]
    confidence = {"canonical_name": "x", "confidence": 7}
    assert error(post("/api/beliefs", json=confidence), 400)["field"] == "confidence"
    assert error(post("/api/beliefs", content=b"[1, 2]"), 400)["field"] == "body"
    assert error(post("/api/beliefs", content=b"{nope"), 400)["field"] == "body"
    huge = post("/api/beliefs", json={"canonical_name": "x", "content": "y" * 300_000})
    assert error(huge, 413)["field"] == "body"


def test_patch_records_a_user_correction(ui: UI) -> None:
    resp = ui.client.patch(
        "/api/beliefs/b-k8s", json={"aliases": ["k8s", "kube", "the cluster"], "content": "EKS."}
    )
    assert resp.status_code == 200, resp.text
    stored = ui.belief("b-k8s")
    assert stored.aliases == ["k8s", "kube", "the cluster"] and stored.content == "EKS."
    assert stored.user_edited
    last = stored.change_log[-1]
    assert last.event == "user_correction" and last.actor == "operator"
    changes = last.detail["changes"]
    assert changes["aliases"] == {"old": ["k8s", "kube"], "new": ["k8s", "kube", "the cluster"]}
    assert changes["user_edited"] == {"old": False, "new": True}
    # the edit is searchable at once (the index follows the store)
    assert ids(ui.client.get("/api/beliefs", params={"q": "the cluster"})) == ["b-k8s"]
    ui.client.patch("/api/beliefs/b-k8s", json={"pinned": False})
    assert ui.belief("b-k8s").change_log[-1].event == "unpinned"
    history = ui.client.get("/api/beliefs/b-k8s/history").json()
    assert [e["event"] for e in history] == ["created", "user_correction", "unpinned"]


def test_patch_errors(ui: UI) -> None:
    patch = ui.client.patch
    assert error(patch("/api/beliefs/b-nope", json={"content": "x"}), 404)
    assert error(patch("/api/beliefs/b-k8s", json={"pinned": "yes"}), 400)["field"] == "pinned"
    status = error(patch("/api/beliefs/b-k8s", json={"epistemic_status": "superseded"}), 400)
    assert status["field"] == "epistemic_status"
    assert error(patch("/api/beliefs/b-k8s", json={"id": "b-other"}), 400)["field"] == "id"
    assert error(patch("/api/beliefs/b-k8s", json={}), 400)["field"] == "body"
    assert (
        error(patch("/api/beliefs/b-k8s", json={"scope": "domain:code"}), 400)["field"] == "scope"
    )
    # renaming onto a live name in a shared scope
    clash = error(patch("/api/beliefs/b-guess", json={"canonical_name": "kubernetes"}), 409)
    assert clash["field"] == "canonical_name"
    assert ui.belief("b-guess").canonical_name == "prefers_fastify"


def test_review_verdict_rejects_without_deleting(ui: UI) -> None:
    resp = ui.client.post("/api/beliefs/b-guess/review", json={"state": "rejected"})
    assert resp.status_code == 200 and resp.json()["review_state"] == "rejected"
    stored = ui.belief("b-guess")
    assert stored.deleted_at is None and stored.change_log[-1].event == "rejected"
    request = ContextRequest(user_id="alice", scopes=("domain:code",), query="use fastify")
    delivered = assemble(ui.runtime.store.index, request).injected_ids()
    assert "b-guess" not in {i for layer in delivered.values() for i in layer}
    ui.client.post("/api/beliefs/b-guess/review", json={"state": "confirmed"})
    delivered = assemble(ui.runtime.store.index, request).injected_ids()
    assert "b-guess" in {i for layer in delivered.values() for i in layer}
    bad = ui.client.post("/api/beliefs/b-guess/review", json={"state": "maybe"})
    assert error(bad, 400)["field"] == "state"
    assert error(ui.client.post("/api/beliefs/b-nope/review", json={"state": "pending"}), 404)


def test_delete_is_soft_and_undoable(ui: UI) -> None:
    resp = ui.client.delete("/api/beliefs/b-tabs")
    assert resp.status_code == 200
    undo = resp.json()["undo"]
    assert undo == {"method": "POST", "path": "/api/beliefs/b-tabs/restore"}
    assert ui.belief("b-tabs").deleted_at is not None
    assert "b-tabs" not in ids(ui.client.get("/api/beliefs"))
    assert ids(ui.client.get("/api/beliefs", params={"q": "tabs"})) == []
    assert ui.client.post(undo["path"]).status_code == 200
    assert ui.belief("b-tabs").deleted_at is None
    assert ids(ui.client.get("/api/beliefs", params={"q": "tabs"})) == ["b-tabs"]
    events = [e.event for e in ui.belief("b-tabs").change_log]
    assert events[-2:] == ["deleted", "restored"]
    assert error(ui.client.delete("/api/beliefs/b-nope"), 404)


def test_restore_refuses_a_taken_name(ui: UI) -> None:
    ui.client.delete("/api/beliefs/b-tabs")
    body = {"canonical_name": "tabs_indentation", "user_id": "alice", "scope": ["user:universal"]}
    assert ui.client.post("/api/beliefs", json=body).status_code == 201
    clash = error(ui.client.post("/api/beliefs/b-tabs/restore"), 409)
    assert clash["field"] == "canonical_name"


def test_chain_and_injections_of_a_belief(ui: UI) -> None:
    chain = ui.client.get("/api/beliefs/b-postgres/chain").json()
    assert [b["id"] for b in chain] == ["b-postgres", "b-postgres-17"]
    record = InjectionRecord(
        request_id="req_1",
        created_at=datetime(2026, 11, 30, 9, 0, tzinfo=UTC),
        user_id="alice",
        agent_id=None,
        scopes=("domain:code",),
        model="gpt-4o-mini",
        endpoint="chat/completions",
        query="deploy on k8s",
        layers={"pinned": ["b-k8s"], "relevant": ["b-postgres-17"]},
        persona=False,
        approx_tokens=42,
    )
    ui.on_store(lambda s: save_records(s, [record]))
    found = ui.client.get("/api/beliefs/b-k8s/injections").json()
    assert [(r["request_id"], r["layers"]["pinned"]) for r in found] == [("req_1", ["b-k8s"])]
    assert ui.client.get("/api/beliefs/b-tabs/injections").json() == []
    assert error(ui.client.get("/api/beliefs/b-nope/injections"), 404)


def test_facets_count_live_beliefs_per_scope(ui: UI) -> None:
    facets = ui.client.get("/api/facets", params={"user": "alice"}).json()
    scopes = {s["scope"]: s for s in facets["scopes"]}
    assert scopes["domain:code"] == {"scope": "domain:code", "count": 3, "pinned": 1, "pending": 1}
    assert {u["user_id"]: u["count"] for u in facets["users"]} == {"alice": 5, "bob": 1}


def test_ids_returns_exactly_those_beliefs(ui: UI) -> None:
    found = ids(ui.client.get("/api/beliefs", params={"ids": "b-postgres,b-tabs,b-nope"}))
    assert found == ["b-postgres", "b-tabs"]


def test_expires_in_days_sets_and_clears_the_expiry(ui: UI) -> None:
    before = datetime.now(UTC)
    body = {"canonical_name": "sprint_goal", "content": "Ship the export.", "expires_in_days": 14}
    created = ui.client.post("/api/beliefs", json=body)
    assert created.status_code == 201, created.text
    belief_id = created.json()["id"]
    expires = ui.belief(belief_id).expires_at
    assert expires is not None
    assert before + timedelta(days=14) <= expires <= datetime.now(UTC) + timedelta(days=14)
    assert datetime.fromisoformat(created.json()["expires_at"]) == expires
    resp = ui.client.patch(f"/api/beliefs/{belief_id}", json={"expires_in_days": 0.5})
    assert resp.status_code == 200, resp.text
    half_day = ui.belief(belief_id).expires_at
    assert half_day is not None and half_day < expires
    assert half_day - datetime.now(UTC) <= timedelta(hours=12)
    last = ui.belief(belief_id).change_log[-1]
    assert last.event == "user_correction" and "expires_at" in last.detail["changes"]
    cleared = ui.client.patch(f"/api/beliefs/{belief_id}", json={"expires_in_days": None})
    assert cleared.status_code == 200 and cleared.json()["expires_at"] is None
    assert ui.belief(belief_id).expires_at is None


def test_expires_in_days_must_be_a_positive_number(ui: UI) -> None:
    post, patch = ui.client.post, ui.client.patch
    for wrong in (0, -3, "7", True, [1], 10**9):
        body = {"canonical_name": "x", "expires_in_days": wrong}
        err = error(post("/api/beliefs", json=body), 400)
        assert err["field"] == "expires_in_days" and "positive number of days" in err["message"]
        err = error(patch("/api/beliefs/b-tabs", json={"expires_in_days": wrong}), 400)
        assert err["field"] == "expires_in_days"
    infinite = post("/api/beliefs", content=b'{"canonical_name": "x", "expires_in_days": Infinity}')
    assert error(infinite, 400)["field"] == "expires_in_days"
    raw_date = {"canonical_name": "x", "expires_at": "2030-01-01"}
    assert error(post("/api/beliefs", json=raw_date), 400)["field"] == "expires_at"
    assert ui.belief("b-tabs").expires_at is None
