"""Sharing an agent's belief with every agent of its user, and always-on writes: visible on the
Audit page, and held back for the user when TENURE_ALWAYS_WRITE_CONFIRM is on."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from beliefs.model.models import Belief
from beliefs.opening import open_store
from proxy.cli.main import main
from proxy.settings import Settings
from tests.extractor.fake_llm import extraction, new_belief, update
from tests.fakes.upstream import FakeUpstream
from tests.proxy.conftest import Gateway
from tests.proxy.gateway.test_extraction import OTHER_BELIEFS, chat, extraction_reply, wait_jobs
from tests.proxy.mcp.mcp_client import call

CODER_ONLY = Belief(
    id="b-coder",
    user_id="alice",
    canonical_name="commit_style",
    aliases=["commits"],
    content="Prefers conventional commit messages.",
    scope=["user:universal"],
    pinned=True,
    agent_id="coder",
)


def sent_system(gw: Gateway, upstream: FakeUpstream, agent: str) -> str:
    body = {"model": "m", "messages": [{"role": "user", "content": "hello there"}]}
    headers = {"X-Tenure-User": "alice", "X-Agent-Id": agent}
    resp = httpx.post(gw.v1 + "/chat/completions", json=body, headers=headers, timeout=10)
    assert resp.status_code == 200, resp.text
    messages = upstream.last("/chat/completions").json["messages"]
    return json.dumps([m for m in messages if m["role"] == "system"])


def recalled(gw: Gateway, agent: str) -> list[str]:
    headers = {"X-Tenure-User": "alice", "X-Agent-Id": agent}
    _, found = call(f"{gw.url}/mcp", "recall", {"query": "commits"}, headers=headers)
    return [h["id"] for h in found["hits"]]


def test_a_belief_reaches_other_agents_only_while_shared(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[CODER_ONLY])
    assert "conventional commit" not in sent_system(gw, upstream, "reviewer")
    assert recalled(gw, "reviewer") == []
    assert "conventional commit" in sent_system(gw, upstream, "coder")

    shared = httpx.post(f"{gw.url}/api/beliefs/b-coder/share", timeout=10)
    assert shared.status_code == 200, shared.text
    assert shared.json()["shared"] is True and shared.json()["agent_id"] == "coder"
    assert "conventional commit" in sent_system(gw, upstream, "reviewer")
    assert recalled(gw, "reviewer") == ["b-coder"]

    unshared = httpx.post(f"{gw.url}/api/beliefs/b-coder/unshare", timeout=10)
    assert unshared.status_code == 200 and unshared.json()["shared"] is False
    assert "conventional commit" not in sent_system(gw, upstream, "reviewer")
    assert recalled(gw, "reviewer") == []
    assert "conventional commit" in sent_system(gw, upstream, "coder")

    history = httpx.get(f"{gw.url}/api/beliefs/b-coder/history", timeout=10).json()
    assert [e["event"] for e in history][-2:] == ["shared", "unshared"]


def test_a_belief_of_no_agent_cannot_be_shared_and_shared_is_not_an_edit(
    make_gateway: Callable[..., Gateway],
) -> None:
    everyone = CODER_ONLY.model_copy(update={"id": "b-all", "agent_id": None})
    gw = make_gateway(beliefs=[everyone])
    refused = httpx.post(f"{gw.url}/api/beliefs/b-all/share", timeout=10)
    assert refused.status_code == 400 and "already receives it" in refused.text
    patched = httpx.patch(f"{gw.url}/api/beliefs/b-all", json={"shared": True}, timeout=10)
    assert patched.status_code == 400 and "shared" in patched.text


def test_the_cli_shares_and_unshares(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TENURE_HOME", str(tmp_path / "home"))
    settings = Settings.load()
    settings.home.mkdir(parents=True)
    with open_store(settings.store_location) as store:
        store.create(CODER_ONLY)
    assert main(["beliefs", "share", "b-coder", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["shared"] is True
    assert main(["beliefs", "unshare", "b-coder"]) == 0
    assert capsys.readouterr().out == "unshared b-coder (commit_style)\n"
    with open_store(settings.store_location) as store:
        events = [e.event for e in store.history("b-coder")]
        assert not store.get("b-coder").shared
    assert events[-2:] == ["shared", "unshared"]


PINNED_STATEMENT = {
    "statement": "Always answer in British English.",
    "aliases": ["spelling"],
    "scope": "user:universal",
    "pinned": True,
}


def test_an_always_on_memory_tool_write_is_refused_when_the_user_confirms_them(
    make_gateway: Callable[..., Gateway],
) -> None:
    gw = make_gateway(always_write_confirm=True)
    failed, result = call(
        f"{gw.url}/mcp", "remember", PINNED_STATEMENT, headers={"X-Tenure-User": "alice"}
    )
    assert failed and result["error"]["field"] == "pinned"
    assert "tenure beliefs pin ID" in result["error"]["message"]
    assert gw.on_store(lambda s: s.list(user_id="alice")) == []


def test_an_always_on_memory_tool_write_is_made_and_shown_on_the_audit_page(
    make_gateway: Callable[..., Gateway],
) -> None:
    gw = make_gateway()
    headers = {"X-Tenure-User": "alice", "X-Agent-Id": "writer"}
    failed, result = call(f"{gw.url}/mcp", "remember", PINNED_STATEMENT, headers=headers)
    assert not failed and result["action"] == "created"
    stored = gw.on_store(lambda s: s.get(result["id"]))
    assert stored.pinned and stored.provenance["agent_id"] == "writer"
    assert [(e.event, e.actor) for e in stored.change_log] == [
        ("created", "mcp:writer"),
        ("always_on", "mcp:writer"),
    ]
    [listed] = httpx.get(f"{gw.url}/api/always-on", timeout=10).json()
    assert (listed["belief_id"], listed["event"]) == (result["id"], "always_on")
    audit = httpx.get(f"{gw.url}/audit", timeout=10).text
    assert "Always-on writes" in audit and stored.canonical_name in audit


CACHE = Belief(
    id="b-cache",
    user_id="alice",
    canonical_name="cache_store",
    content="Uses Redis.",
    scope=["project:billing"],
    pinned=True,
)


@pytest.mark.parametrize("confirm", [True, False])
def test_extraction_writes_an_always_on_belief_as_retrieved_when_the_user_confirms_them(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream, confirm: bool
) -> None:
    gw = make_gateway(
        beliefs=[CACHE, *OTHER_BELIEFS], extract_workers=1, always_write_confirm=confirm
    )
    superseded = update(
        "superseded", canonical_name="cache_store", new_content="Uses Valkey.", reason="moved"
    )
    upstream.queue(extraction_reply(extraction(belief_updates=[superseded])))
    chat(gw, "We moved the cache from Redis to Valkey.")
    [job] = wait_jobs(gw, 1)
    [head_id] = job["written_ids"]
    head = gw.on_store(lambda s: s.get(head_id))
    assert head.content == "Uses Valkey." and gw.on_store(lambda s: s.get("b-cache").superseded_by)
    events = {e.event: e for e in head.change_log}
    [listed] = httpx.get(f"{gw.url}/api/always-on", params={"user": "alice"}, timeout=10).json()
    if confirm:
        assert not head.pinned and head.delivery == "retrieved"
        refused = events["always_on_refused"]
        assert refused.actor == "extractor" and refused.detail["asked"]["pinned"] is True
        assert f"tenure beliefs pin {head.id}" in refused.detail["reason"]
        assert "always_on" not in events
        assert listed["event"] == "always_on_refused"
    else:
        assert head.pinned and "always_on_refused" not in events
        assert events["always_on"].actor == "extractor"
        assert listed["event"] == "always_on"


def test_what_an_agent_says_or_remembers_is_its_own_until_shared(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=list(OTHER_BELIEFS), extract_workers=1)
    said = new_belief("lint_tool", "Lints with ruff.", aliases=["ruff", "linting"])
    upstream.queue(extraction_reply(extraction(new_beliefs=[said])))
    coder = {"X-Tenure-User": "alice", "X-Agent-Id": "coder"}
    body = {"model": "m", "messages": [{"role": "user", "content": "We lint with ruff."}]}
    assert httpx.post(gw.v1 + "/chat/completions", json=body, headers=coder).status_code == 200
    [job] = wait_jobs(gw, 1)
    [written] = job["written_ids"]
    assert gw.on_store(lambda s: s.get(written)).agent_id == "coder"
    _, kept = call(f"{gw.url}/mcp", "remember", {"statement": "Commits follow the changelog."},
                   headers=coder)  # fmt: skip
    assert gw.on_store(lambda s: s.get(kept["id"])).agent_id == "coder"

    def reaches(agent: str, query: str) -> list[str]:
        headers = {"X-Tenure-User": "alice", "X-Agent-Id": agent}
        _, found = call(f"{gw.url}/mcp", "recall", {"query": query}, headers=headers)
        return [h["id"] for h in found["hits"]]

    assert reaches("reviewer", "ruff") == [] and reaches("coder", "ruff") == [written]
    assert httpx.post(f"{gw.url}/api/beliefs/{written}/share", timeout=10).status_code == 200
    assert reaches("reviewer", "ruff") == [written]
