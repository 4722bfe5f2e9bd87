"""The memory tools at `/mcp`, driven with the `mcp` SDK's client against a running gateway."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anthropic
import httpx
import pytest
from mcp import Client

from beliefs.model.models import Belief
from tests.fakes.upstream import FakeUpstream
from tests.proxy.conftest import Gateway
from tests.proxy.mcp.mcp_client import Mode, call, with_tools

ALICE = {"X-Tenure-User": "alice"}


def runbook(**kw: Any) -> Belief:
    values: dict[str, Any] = {
        "user_id": "alice",
        "canonical_name": "deploy_runbook",
        "aliases": ["runbook"],
        "content": "Deploys follow the blue-green runbook in ops/deploy.md.",
        "why_it_matters": "Walk through the runbook steps before any deploy.",
        "delivery": "on_demand",
    }
    values.update(kw)
    return Belief(**values)


def sent_to_provider(gateway: Gateway, upstream: FakeUpstream, text: str, user: str) -> str:
    """What the provider received for a chat turn of `user` through the gateway."""
    gateway.openai().chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "user", "content": text}],
        extra_headers={"X-Tenure-User": user},
    )
    return json.dumps(upstream.last("/chat/completions").json)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_lists_the_tools_and_resources(make_gateway: Callable[..., Gateway], mode: Mode) -> None:
    gateway = make_gateway()

    async def work(client: Client) -> tuple[Any, Any]:
        return (await client.list_tools()).tools, (await client.list_resources()).resources

    tools, resources = with_tools(f"{gateway.url}/mcp", work, headers=ALICE, mode=mode)
    by_name = {t.name: t for t in tools}
    assert set(by_name) == {"recall", "remember", "forget", "beliefs", "open_questions", "sources"}
    assert by_name["recall"].input_schema["required"] == ["query"]
    assert set(by_name["remember"].input_schema["properties"]) >= {
        "statement",
        "why_it_matters",
        "scope",
        "type",
    }
    assert "on_demand" in (by_name["recall"].description or "")
    assert by_name["recall"].annotations.read_only_hint is True
    # A soft delete: a client that refuses destructive tools without approval still runs it.
    assert by_name["forget"].annotations.destructive_hint is False
    assert "reversible" in (by_name["forget"].description or "")
    assert {str(r.uri) for r in resources} == {"tenure://persona", "tenure://pinned"}


def test_recall_finds_an_on_demand_belief_injection_skips(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    belief = runbook()
    gateway = make_gateway(beliefs=[belief])
    assert "blue-green" not in sent_to_provider(gateway, upstream, "check the runbook", "alice")

    failed, result = call(f"{gateway.url}/mcp", "recall", {"query": "runbook"}, headers=ALICE)

    assert not failed
    [hit] = result["hits"]
    assert hit["id"] == belief.id
    assert hit["tags"] == ["on_demand"]
    assert hit["why_it_matters"] == belief.why_it_matters


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_remember_round_trips_and_reinforces_instead_of_duplicating(
    make_gateway: Callable[..., Gateway], mode: Mode
) -> None:
    gateway = make_gateway()
    url = f"{gateway.url}/mcp"
    statement = {
        "statement": "Billing runs on Postgres 16.",
        "why_it_matters": "Write SQL for Postgres 16.",
        "aliases": ["postgres", "database"],
        "scope": "project:billing",
        "type": "decision",
    }

    _, first = call(url, "remember", statement, headers=ALICE, mode=mode)
    _, found = call(
        url, "recall", {"query": "postgres", "scope": "project:billing"}, headers=ALICE, mode=mode
    )
    _, second = call(url, "remember", statement, headers=ALICE, mode=mode)

    assert first["action"] == "created"
    assert [h["id"] for h in found["hits"]] == [first["id"]]
    assert found["hits"][0]["source_type"] == "mcp"
    assert second == {**second, "action": "reinforced", "id": first["id"]}
    assert second["reinforcement_count"] == 2
    live = gateway.on_store(lambda s: s.list(user_id="alice"))
    assert [b.id for b in live] == [first["id"]]
    stored = live[0]
    assert (stored.source_type, stored.trust, stored.scope) == ("mcp", 2, ["project:billing"])
    assert stored.provenance["via"] == "mcp"
    events = gateway.on_store(lambda s: s.history(first["id"]))
    assert [(e.event, e.actor) for e in events] == [
        ("created", "mcp:alice"),
        ("reinforced", "mcp:alice"),
    ]


def test_remember_under_a_known_name_opens_a_conflict_and_replaces_supersedes(
    make_gateway: Callable[..., Gateway],
) -> None:
    old = Belief(
        user_id="alice",
        canonical_name="database",
        content="Uses MySQL 8.",
        scope=["domain:general"],
    )
    gateway = make_gateway(beliefs=[old])
    url = f"{gateway.url}/mcp"

    _, contested = call(
        url, "remember", {"statement": "Uses Postgres 16.", "name": "database"}, headers=ALICE
    )
    _, replaced = call(
        url, "remember", {"statement": "Uses Postgres 16.", "replaces": old.id}, headers=ALICE
    )

    assert contested["action"] == "conflict"
    assert contested["existing_id"] == old.id
    rows = gateway.rows("SELECT existing_id, status FROM conflicts")
    assert rows == [(old.id, "open")]
    assert replaced["action"] == "superseded"
    assert replaced["replaced"] == old.id
    stamped = gateway.on_store(lambda s: s.get(old.id))
    assert stamped.superseded_by == replaced["id"]
    head = gateway.on_store(lambda s: s.get(replaced["id"]))
    assert (head.content, head.source_type) == ("Uses Postgres 16.", "mcp")
    assert head.rejected_alternatives == ["MySQL"]  # the replaced option is ruled out


def test_forget_stops_injection_keeps_history_and_the_ui_restores_it(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    belief = runbook(delivery="retrieved")
    gateway = make_gateway(beliefs=[belief])
    assert "blue-green" in sent_to_provider(gateway, upstream, "check the runbook", "alice")

    failed, result = call(
        f"{gateway.url}/mcp",
        "forget",
        {"canonical_name": "deploy_runbook", "reason": "we moved to canary deploys"},
        headers=ALICE,
    )

    assert not failed and result["action"] == "forgotten"
    assert "blue-green" not in sent_to_provider(gateway, upstream, "check the runbook", "alice")
    events = gateway.on_store(lambda s: s.history(belief.id))
    assert events[-1].event == "rejected"
    assert "we moved to canary deploys" in events[-1].detail["reason"]
    with httpx.Client(base_url=gateway.url) as browser:
        page = browser.get(f"/beliefs/{belief.id}")
        token = page.text.split('name="csrf_token" value="')[1].split('"')[0]
        assert "Confirm" in page.text
        browser.post(
            f"/beliefs/{belief.id}/review", data={"csrf_token": token, "state": "confirmed"}
        )
    assert "blue-green" in sent_to_provider(gateway, upstream, "check the runbook", "alice")


def test_another_users_beliefs_never_appear(make_gateway: Callable[..., Gateway]) -> None:
    bobs = runbook(user_id="bob", content="Bob's private runbook.")
    gateway = make_gateway(beliefs=[bobs])
    url = f"{gateway.url}/mcp"

    _, recalled = call(url, "recall", {"query": "runbook"}, headers=ALICE)
    _, listed = call(url, "beliefs", {}, headers=ALICE)
    failed, forgot = call(url, "forget", {"id": bobs.id, "reason": "x"}, headers=ALICE)

    assert recalled["hits"] == [] and listed["beliefs"] == []
    assert failed and forgot["error"]["field"] == "id"
    assert gateway.on_store(lambda s: s.get(bobs.id)).review_state == "confirmed"


def test_agent_ids_and_url_scopes_resolve_as_on_the_gateway(
    make_gateway: Callable[..., Gateway],
) -> None:
    private = runbook(agent_id="deployer", delivery="retrieved")
    gateway = make_gateway(beliefs=[private])

    _, other = call(
        f"{gateway.url}/mcp", "recall", {"query": "runbook"}, headers={**ALICE, "X-Agent-Id": "x"}
    )
    _, own = call(
        f"{gateway.url}/mcp",
        "recall",
        {"query": "runbook"},
        headers={**ALICE, "X-Agent-Id": "deployer"},
    )
    _, remembered = call(
        f"{gateway.url}/scope/project:billing/mcp",
        "remember",
        {"statement": "Invoices are issued monthly.", "aliases": ["invoices"]},
        headers=ALICE,
    )

    assert other["hits"] == [] and [h["id"] for h in own["hits"]] == [private.id]
    stored = gateway.on_store(lambda s: s.get(remembered["id"]))
    assert stored.scope == ["project:billing"]


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("recall", {"query": "x", "limit": 500}, "limit"),
        ("recall", {}, "query"),
        ("recall", {"query": "x", "scope": "galaxy:far"}, "scope"),
        ("remember", {"statement": "x", "colour": "red"}, "colour"),
        ("remember", {"statement": "x", "type": "rumour"}, "type"),
        ("forget", {"reason": "wrong"}, "id"),
        ("forget", {"id": "b-missing", "reason": "wrong"}, "id"),
    ],
)
def test_bad_arguments_are_errors_naming_the_field(
    make_gateway: Callable[..., Gateway], tool: str, arguments: dict[str, Any], field: str
) -> None:
    gateway = make_gateway()

    failed, result = call(f"{gateway.url}/mcp", tool, arguments, headers=ALICE)

    assert failed
    assert result["error"]["field"] == field
    assert field in result["error"]["message"]
    [row] = gateway.rows("SELECT tool, ok FROM mcp_calls")
    assert row == (tool, False)


def test_tool_calls_are_recorded_and_shown_on_the_audit_page(
    make_gateway: Callable[..., Gateway],
) -> None:
    gateway = make_gateway()
    url = f"{gateway.url}/mcp"
    headers = {**ALICE, "X-Agent-Id": "coder"}
    _, made = call(
        url, "remember", {"statement": "Prefers tabs.", "aliases": ["tabs"]}, headers=headers
    )
    call(url, "recall", {"query": "tabs"}, headers=headers)

    with httpx.Client(base_url=gateway.url) as client:
        rows = client.get("/api/mcp/calls", params={"user": "alice"}).json()
        page = client.get("/audit").text
        belief_page = client.get(f"/beliefs/{made['id']}").text
        described = client.get("/api/openapi.json").json()["paths"]["/api/mcp/calls"]["get"]

    assert [(r["tool"], r["agent_id"], r["ok"]) for r in rows] == [
        ("recall", "coder", True),
        ("remember", "coder", True),
    ]
    assert rows[1]["belief_ids"] == [made["id"]] and rows[1]["outcome"].startswith("created")
    assert "Memory tool calls" in page and "remember" in page and "created prefers_tabs" in page
    assert "via MCP" in belief_page
    assert {p["name"] for p in described["parameters"]} == {"user", "tool", "belief_id", "limit"}


def test_the_access_key_guards_the_endpoint(make_gateway: Callable[..., Gateway]) -> None:
    gateway = make_gateway(api_key="k-secret")
    bare = httpx.post(
        f"{gateway.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert bare.status_code == 401

    failed, result = call(
        f"{gateway.url}/mcp",
        "beliefs",
        {},
        headers={**ALICE, "Authorization": "Bearer k-secret"},
    )
    assert not failed and result["beliefs"] == []


def test_open_questions_and_the_persona_and_pinned_resources(
    make_gateway: Callable[..., Gateway],
) -> None:
    question = Belief(
        user_id="alice",
        type="open_question",
        canonical_name="queue_choice",
        content="Kafka or SQS for the event bus?",
        scope=["project:billing"],
    )
    pinned = Belief(
        user_id="alice",
        canonical_name="money_type",
        content="Amounts are integer cents.",
        scope=["project:billing"],
        pinned=True,
    )
    gateway = make_gateway(
        beliefs=[question, pinned], persona="Answers briefly, in British English."
    )

    async def work(client: Client) -> tuple[Any, str, str]:
        listed = await client.call_tool("open_questions", {})
        persona = await client.read_resource("tenure://persona")
        pins = await client.read_resource("tenure://pinned")
        texts = [getattr(c, "text", "") for c in (*persona.contents, *pins.contents)]
        return listed.structured_content, texts[0], texts[1]

    listed, persona, pins = with_tools(
        f"{gateway.url}/scope/project:billing/mcp", work, headers=ALICE
    )

    assert [q["id"] for q in listed["open_questions"]] == [question.id]
    assert persona == "Answers briefly, in British English."
    assert [b["id"] for b in json.loads(pins)["pinned"]] == [pinned.id]


def test_a_bad_scope_header_is_refused_by_name(make_gateway: Callable[..., Gateway]) -> None:
    gateway = make_gateway()

    reply = httpx.post(
        f"{gateway.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream", "X-Tenure-Scope": "galaxy"},
    )

    assert reply.status_code == 400
    assert "X-Tenure-Scope" in reply.text and "galaxy" in reply.text


def test_a_replacement_lives_where_the_old_belief_did(make_gateway: Callable[..., Gateway]) -> None:
    old = Belief(
        user_id="alice", canonical_name="ci", content="CI runs on Jenkins.", scope=["project:web"]
    )
    gateway = make_gateway(beliefs=[old])

    _, replaced = call(
        f"{gateway.url}/mcp",
        "remember",
        {"statement": "CI runs on GitHub Actions.", "replaces": "ci", "aliases": ["gha"]},
        headers=ALICE,
    )

    head = gateway.on_store(lambda s: s.get(replaced["id"]))
    assert (head.scope, head.canonical_name) == (["project:web"], "ci")
    assert "gha" in head.aliases
    assert gateway.on_store(lambda s: s.get(old.id)).superseded_by == head.id


def test_no_secret_reaches_a_belief_or_the_audit_rows(
    make_gateway: Callable[..., Gateway],
) -> None:
    gateway = make_gateway()
    url = f"{gateway.url}/mcp"
    key = "ghp_Q7vX2mLp9RtY4wKs8NdB3cFh6JzE1aUo5GiT"
    password = "Tr0ub4dor-Kx9"
    call(
        url,
        "remember",
        {
            "statement": f"The staging password: {password} and the CI uses {key}.",
            # The same secrets bare, where no rule alone would see them.
            "why_it_matters": f"Log in with {password} when staging asks.",
            "aliases": [password, "staging"],
        },
        headers=ALICE,
    )
    call(url, "recall", {"query": f"which repo does {key} open"}, headers=ALICE)

    with httpx.Client(base_url=gateway.url) as client:
        listed = client.get("/api/mcp/calls", params={"user": "alice"}).text
        page = client.get("/audit").text
    stored = gateway.on_store(
        lambda s: s.execute("SELECT arguments, result FROM mcp_calls").fetchall()
    )
    beliefs = gateway.on_store(lambda s: s.list(user_id="alice"))

    assert len(stored) == 2 and len(beliefs) == 1
    for shown in (listed, page, json.dumps(stored), beliefs[0].model_dump_json()):
        assert key not in shown and password not in shown
    assert "[REDACTED]" in stored[0][0] and "[REDACTED]" in stored[1][0]


def test_a_row_recorded_before_redaction_is_shown_redacted(
    make_gateway: Callable[..., Gateway],
) -> None:
    gateway = make_gateway()
    key = "ghp_Q7vX2mLp9RtY4wKs8NdB3cFh6JzE1aUo5GiT"
    arguments = json.dumps({"query": f"where is {key} used"})
    gateway.rows(
        "INSERT INTO mcp_calls (id, created_at, user_id, agent_id, scopes, transport, client, "
        "tool, arguments, ok, outcome, belief_ids, result, duration_ms) VALUES "
        "('mcp_old', current_timestamp, 'alice', NULL, [], 'http', NULL, 'recall', ?, true, "
        "'0 hits', [], '{}', 1.0)",
        [arguments],
    )
    with httpx.Client(base_url=gateway.url) as client:
        listed = client.get("/api/mcp/calls", params={"user": "alice"}).json()
        page = client.get("/audit").text
    assert listed[0]["arguments"] == {"query": "where is [REDACTED] used"}
    assert key not in page


def test_a_remembered_statement_is_found_by_its_own_words(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    others = [
        Belief(user_id="alice", canonical_name=f"other_topic_{n}", content="x") for n in range(8)
    ]
    gateway = make_gateway(beliefs=others)
    statement = "Every payment call must carry an idempotency key."
    _, remembered = call(f"{gateway.url}/mcp", "remember", {"statement": statement}, headers=ALICE)
    stored = gateway.on_store(lambda s: s.get(remembered["id"]))
    assert stored.canonical_name == "payment_idempotency_key"
    assert stored.aliases == ["idempotency key", "idempotency"]
    assert "note" not in remembered  # no "add aliases" hint: it has some

    sent = sent_to_provider(
        gateway, upstream, "how do we make payment retries safe? idempotency?", "alice"
    )
    assert statement in sent


def test_a_session_scoped_by_url_receives_what_the_tools_at_its_scope_remembered(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gateway = make_gateway()
    base = f"{gateway.url}/scope/domain:code"  # ANTHROPIC_BASE_URL, and the tools beside it
    statement = "Every payment call must carry an idempotency key."
    failed, _ = call(f"{base}/mcp", "remember", {"statement": statement})
    assert not failed
    client = anthropic.Anthropic(base_url=base, api_key="sk-ant-client", max_retries=0)
    with client:
        client.messages.create(
            model="claude-sonnet-4",
            max_tokens=64,
            messages=[{"role": "user", "content": "Which key does a payment call need?"}],
        )
    assert statement in upstream.last("/v1/messages").body.decode()
