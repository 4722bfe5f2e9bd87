"""Access tokens per user: a client token reaches its own user's memory on every route and
nobody else's; the operator (key or token) reaches everything."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from beliefs.model.models import Belief
from tests.fakes.upstream import FakeUpstream
from tests.proxy.beliefs_seed import BOB, POSTGRES
from tests.proxy.conftest import Gateway, no_request_to
from tests.proxy.gateway.test_replicas import KEY, eventually, keyed_replicas  # noqa: F401 (a fixture)
from tests.proxy.mcp.mcp_client import call

OPERATOR_KEY = "op-key"
OP = {"Authorization": f"Bearer {OPERATOR_KEY}"}
ASK_PG = {"model": "m", "messages": [{"role": "user", "content": "which pg version do we use?"}]}


def make_token(gw: Gateway, headers: dict[str, str] | None = None, **body: Any) -> str:
    made = httpx.post(gw.url + "/api/tokens", json=body, headers=OP if headers is None else headers)
    assert made.status_code == 201, made.text
    token: str = made.json()["token"]
    return token


def bearer(token: str, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **extra}


def chat(
    gw: Gateway, headers: dict[str, str], body: dict[str, Any] = ASK_PG, path: str = "/v1"
) -> httpx.Response:
    return httpx.post(f"{gw.url}{path}/chat/completions", json=body, headers=headers)


def refused(resp: httpx.Response, status: int, words: str) -> None:
    assert resp.status_code == status, resp.text
    assert words in resp.json()["error"]["message"], resp.json()


def test_a_client_token_never_reaches_another_users_memory(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[POSTGRES, BOB], api_key=OPERATOR_KEY)
    alice = make_token(gw, user="alice")
    with no_request_to(upstream):
        refused(chat(gw, bearer(alice, **{"X-Tenure-User": "bob"})), 403, "belongs to user 'alice'")
        with_meta = {**ASK_PG, "metadata": {"tenure_user": "bob"}}
        refused(chat(gw, bearer(alice), with_meta), 403, "cannot act for 'bob'")
        refused(chat(gw, bearer(alice), path="/user/bob/v1"), 403, "cannot act for 'bob'")
        anthropic = httpx.post(
            gw.url + "/v1/messages",
            json={"model": "c", "max_tokens": 5, "messages": ASK_PG["messages"]},
            headers={"x-api-key": alice, "X-Tenure-User": "bob"},
        )
        assert anthropic.status_code == 403 and anthropic.json()["type"] == "error"
        responses = httpx.post(
            gw.url + "/v1/responses",
            json={"model": "m", "input": "which pg version?"},
            headers=bearer(alice, **{"X-Tenure-User": "bob"}),
        )
        refused(responses, 403, "cannot act for 'bob'")
    api = gw.url + "/api/beliefs"
    refused(httpx.get(api, params={"user": "bob"}, headers=bearer(alice)), 403, "'bob'")
    listed = httpx.get(api, params={"q": "pg"}, headers=bearer(alice)).json()
    assert [b["id"] for b in listed] == [POSTGRES.id]
    assert httpx.get(api, params={"ids": BOB.id}, headers=bearer(alice)).json() == []
    recalled = httpx.get(gw.url + "/api/recall", params={"query": "pg"}, headers=bearer(alice))
    assert [h["id"] for h in recalled.json()["hits"]] == [POSTGRES.id]
    for method, path in [
        ("GET", f"/api/beliefs/{BOB.id}"),
        ("GET", f"/api/beliefs/{BOB.id}/history"),
        ("PATCH", f"/api/beliefs/{BOB.id}"),
        ("DELETE", f"/api/beliefs/{BOB.id}"),
        ("POST", f"/api/beliefs/{BOB.id}/review"),
    ]:
        body = {"content": "x"} if method == "PATCH" else {"state": "rejected"}
        resp = httpx.request(method, gw.url + path, json=body, headers=bearer(alice))
        assert resp.status_code == 404, (method, path, resp.text)
    for path in ("/api/tokens", "/api/facets", "/api/mcp/calls", "/api/injections"):
        refused(httpx.get(gw.url + path, headers=bearer(alice)), 403, "operator")
    page = httpx.get(gw.url + "/beliefs", headers=bearer(alice))
    assert page.status_code == 403 and "operator" in page.text
    mcp = f"{gw.url}/mcp"
    as_bob = bearer(alice, **{"X-Tenure-User": "bob"})
    for tool, args in [("recall", {"query": "pg"}), ("forget", {"id": BOB.id, "reason": "x"})]:
        resp = httpx.post(
            mcp,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": tool, "arguments": args},
            },
            headers={**as_bob, "Accept": "application/json, text/event-stream"},
        )
        refused(resp, 403, "cannot act for 'bob'")
        assert resp.json()["jsonrpc"] == "2.0" and resp.json()["error"]["code"] == -32600
    failed, forgot = call(mcp, "forget", {"id": BOB.id, "reason": "x"}, headers=bearer(alice))
    assert failed and forgot["error"]["field"] == "id"
    as_operator = httpx.get(api, params={"user": "bob"}, headers=OP).json()
    assert [b["id"] for b in as_operator] == [BOB.id]  # the key stays an operator key
    bob_now = gw.on_store(lambda s: s.get(BOB.id))
    assert bob_now.review_state == "confirmed" and bob_now.content == BOB.content


def test_a_client_token_reaches_its_own_memory_on_every_route(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(
        beliefs=[POSTGRES, BOB], api_key=OPERATOR_KEY, default_scopes=("domain:code",)
    )
    alice = make_token(gw, user="alice")
    cases: list[tuple[dict[str, str], dict[str, Any], str]] = [
        (bearer(alice), ASK_PG, "/v1"),  # names no user: the token's
        (bearer(alice, **{"X-Tenure-User": "alice"}), ASK_PG, "/v1"),
        (bearer(alice), {**ASK_PG, "metadata": {"tenure_user": "alice"}}, "/v1"),
        (bearer(alice), ASK_PG, "/user/alice/v1"),
        (bearer(alice), {**ASK_PG, "user": "some-app-id"}, "/v1"),  # app ids are not asked
    ]
    for headers, body, path in cases:
        resp = chat(gw, headers, body, path)
        assert resp.status_code == 200, resp.text
        sent = json.dumps(upstream.last("/chat/completions").json)
        assert "PostgreSQL 16" in sent and "SQLite" not in sent
        assert "authorization" not in upstream.last("/chat/completions").headers
    listed = httpx.get(gw.url + "/api/beliefs", headers=bearer(alice)).json()
    assert [b["id"] for b in listed] == [POSTGRES.id]
    patched = httpx.patch(
        f"{gw.url}/api/beliefs/{POSTGRES.id}",
        json={"content": "PostgreSQL 17."},
        headers=bearer(alice),
    )
    assert patched.status_code == 200 and patched.json()["content"] == "PostgreSQL 17."
    _, recalled = call(f"{gw.url}/mcp", "recall", {"query": "pg"}, headers=bearer(alice))
    assert [h["id"] for h in recalled["hits"]] == [POSTGRES.id]
    failed, forgot = call(
        f"{gw.url}/mcp", "forget", {"id": POSTGRES.id, "reason": "moved"}, headers=bearer(alice)
    )
    assert not failed and forgot["action"] == "forgotten"


def test_agents_and_scope_patterns_bound_a_token(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    billing = Belief(
        id="b-billing",
        user_id="alice",
        canonical_name="invoice_format",
        aliases=["invoices"],
        content="Invoices are PDF/A.",
        scope=["project:billing"],
    )
    gw = make_gateway(beliefs=[POSTGRES, billing], api_key=OPERATOR_KEY)
    token = make_token(gw, user="alice", agents=["coder"], scopes=["project:*"])
    with no_request_to(upstream):
        refused(chat(gw, bearer(token, **{"X-Agent-Id": "writer"})), 403, "agent 'coder'")
        refused(chat(gw, bearer(token, **{"X-Tenure-Scope": "domain:code"})), 403, "project:*")
        refused(chat(gw, bearer(token)), 403, "'domain:general' is outside")  # the default
    in_billing = bearer(token, **{"X-Tenure-Scope": "project:billing"})
    set_scope = {**ASK_PG, "messages": [{"role": "user", "content": "!scope domain:code"}]}
    refused(chat(gw, in_billing, set_scope), 403, "'domain:code' is outside")
    command = {"model": "m", "input": "!scope domain:code"}  # the same on every protocol
    by_responses = httpx.post(f"{gw.url}/v1/responses", json=command, headers=in_billing)
    refused(by_responses, 403, "'domain:code' is outside")
    as_coder = {**OP, "X-Tenure-User": "alice", "X-Agent-Id": "coder"}
    assert chat(gw, as_coder, set_scope).status_code == 200  # the operator's to set
    ask = {**ASK_PG, "messages": [{"role": "user", "content": "how do invoices look?"}]}
    ok = chat(gw, in_billing, ask)  # the operator's chat scope is not the token's: left out
    assert ok.status_code == 200 and "PDF/A" in json.dumps(upstream.last().json)
    assert "PostgreSQL 16" not in json.dumps(upstream.last().json)
    listed = httpx.get(gw.url + "/api/beliefs", headers=bearer(token)).json()
    assert [b["id"] for b in listed] == [billing.id]  # domain:code is outside its patterns
    failed, result = call(
        f"{gw.url}/mcp",
        "recall",
        {"query": "pg", "scope": "domain:code"},
        headers=bearer(token, **{"X-Tenure-Scope": "project:billing"}),
    )
    assert failed and result["error"]["field"] == "scope"


def test_a_revoked_token_is_refused_at_once_and_tokens_are_stored_hashed(
    make_gateway: Callable[..., Gateway],
) -> None:
    gw = make_gateway(beliefs=[POSTGRES], api_key=OPERATOR_KEY)
    token = make_token(gw, user="alice")
    assert chat(gw, bearer(token)).status_code == 200
    [row] = gw.rows("SELECT id, token_hash FROM access_tokens")
    assert token not in json.dumps(gw.rows("SELECT * FROM access_tokens"), default=str)
    assert httpx.delete(f"{gw.url}/api/tokens/{row[0]}", headers=OP).status_code == 200
    refused(chat(gw, bearer(token)), 401, f"token {row[0]} was revoked")
    refused(httpx.get(gw.url + "/api/beliefs", headers=bearer(token)), 401, "revoked")
    refused(
        httpx.get(gw.url + "/api/beliefs", headers=bearer("tnr_guess")), 401, "wrong access key"
    )
    listing = httpx.get(gw.url + "/api/tokens", headers=OP).json()
    assert listing[0]["revoked_at"] and "token" not in listing[0]


def test_without_a_key_the_first_token_turns_access_control_on(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[POSTGRES, BOB])
    assert chat(gw, {"Authorization": "Bearer sk-client"}).status_code == 200  # as before
    assert upstream.last().headers["authorization"] == "Bearer sk-client"
    operator = make_token(gw, headers={}, operator=True)  # the one person at this machine
    with no_request_to(upstream):
        refused(chat(gw, {}), 401, "missing or wrong access key: send")
    assert chat(gw, bearer(operator, **{"X-Tenure-User": "bob"})).status_code == 200
    assert "authorization" not in upstream.last().headers  # our token never goes upstream
    everyone = httpx.get(gw.url + "/api/beliefs", headers=bearer(operator)).json()
    assert {b["user_id"] for b in everyone} == {"alice", "bob"}


def test_the_ui_login_takes_an_operator_token_and_refuses_a_client_token(
    make_gateway: Callable[..., Gateway],
) -> None:
    gw = make_gateway(beliefs=[POSTGRES], api_key=OPERATOR_KEY)
    operator = make_token(gw, operator=True)
    alice = make_token(gw, user="alice")
    for key, status, shown in [
        (alice, 403, "the pages need an operator token"),
        (operator, 303, ""),
    ]:
        with httpx.Client(base_url=gw.url) as browser:
            page = browser.get("/login")
            csrf = page.text.split('name="csrf_token" value="')[1].split('"')[0]
            resp = browser.post("/login", data={"csrf_token": csrf, "key": key, "next": "/beliefs"})
            assert resp.status_code == status and shown in resp.text
            beliefs = browser.get("/beliefs")
            assert (beliefs.status_code == 200) == (status == 303)
            if status == 303:
                assert "postgres" in beliefs.text
                token_id = next(
                    t["id"]
                    for t in httpx.get(gw.url + "/api/tokens", headers=OP).json()
                    if t["kind"] == "operator"
                )
                httpx.delete(f"{gw.url}/api/tokens/{token_id}", headers=OP)
                after = browser.get("/beliefs")  # revoking the token ended its session
                assert after.status_code == 303 and after.headers["location"].startswith("/login")


def test_a_token_made_or_revoked_on_one_replica_holds_on_the_other(
    request: pytest.FixtureRequest,
) -> None:
    a, b = request.getfixturevalue("keyed_replicas")  # two `tenure serve` on one PostgreSQL
    key = {"Authorization": f"Bearer {KEY}"}
    made = httpx.post(f"{a}/api/tokens", json={"user": "alice"}, headers=key, timeout=10).json()
    token = bearer(made["token"])

    def status(base: str) -> int:
        resp = httpx.post(f"{base}/v1/chat/completions", json=ASK_PG, headers=token, timeout=30)
        return resp.status_code

    assert status(b) == 200  # at once, though made on the other replica
    revoked = httpx.delete(f"{a}/api/tokens/{made['id']}", headers=key, timeout=10)
    assert revoked.status_code == 200
    assert status(a) == 401
    eventually(lambda: status(b) == 401)
