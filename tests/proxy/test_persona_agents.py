"""The persona reaches every agent of a user, so it carries no agent's own beliefs; and the
beliefs it carries are counted as delivered."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx

from beliefs.models import Belief
from tests.fakes.upstream import FakeUpstream
from tests.proxy.conftest import Gateway

CODER_ONLY = Belief(
    id="b-coder",
    user_id="alice",
    type="preference",
    canonical_name="commit_style",
    content="Prefers conventional commit messages.",
    scope=["user:universal"],
    pinned=True,
    agent_id="coder",
)
EVERY_AGENT = Belief(
    id="b-all",
    user_id="alice",
    type="preference",
    canonical_name="answer_length",
    content="Prefers short answers.",
    scope=["user:universal"],
    pinned=True,
)


def ask(gw: Gateway, agent: str | None) -> dict[str, str]:
    headers = {"X-Tenure-User": "alice"}
    if agent:
        headers["X-Agent-Id"] = agent
    body = {"model": "m", "messages": [{"role": "user", "content": "hello there"}]}
    resp = httpx.post(gw.v1 + "/chat/completions", json=body, headers=headers, timeout=10)
    assert resp.status_code == 200, resp.text
    return dict(resp.headers)


def sent_system(upstream: FakeUpstream) -> str:
    messages = upstream.last("/chat/completions").json["messages"]
    return json.dumps([m for m in messages if m["role"] == "system"])


def test_an_agents_own_pinned_belief_reaches_only_that_agent(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[CODER_ONLY, EVERY_AGENT])
    for agent in (None, "other"):
        ask(gw, agent)
        assert "conventional commit" not in sent_system(upstream), agent
        assert "short answers" in sent_system(upstream)
    ask(gw, "coder")
    assert "conventional commit" in sent_system(upstream)


def test_an_operator_persona_does_not_swallow_an_agents_pinned_belief(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[CODER_ONLY, EVERY_AGENT], persona="You like brevity.")
    ask(gw, "coder")
    assert "conventional commit" in sent_system(upstream)
    ask(gw, "other")
    assert "conventional commit" not in sent_system(upstream)


def test_beliefs_the_persona_carries_are_counted_and_recorded(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[EVERY_AGENT])
    headers = ask(gw, None)
    system = sent_system(upstream)
    assert "About the user: You prefer short answers." in system  # in the persona, not pinned
    assert headers["x-tenure-injected"] == "1"
    gw.settle(lambda: bool(httpx.get(gw.url + "/api/injections").json()))
    [record] = httpx.get(gw.url + "/api/injections").json()
    assert record["layers"] == {"persona": ["b-all"]}
    assert record["belief_ids"] == ["b-all"]
