"""The persona reaches every agent of a user, so it carries no agent's own beliefs; and the
beliefs it carries are counted as delivered."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx

from beliefs.model.models import Belief
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


def standing_beliefs(user: str, count: int) -> list[Belief]:
    """`count` pinned beliefs every agent of `user` receives (an operator's persona stands for
    them all), then one only the coder agent receives (rendered in the pinned layer)."""
    carried = [
        Belief(
            id=f"{user}-carried-{i:04d}",
            user_id=user,
            type="preference",
            canonical_name=f"habit_{i:04d}",
            content=f"{user} keeps habit number {i:04d}.",
            scope=["user:universal"],
            pinned=True,
        )
        for i in range(count)
    ]
    own = CODER_ONLY.model_copy(update={"id": f"{user}-coder", "user_id": user})
    return [*carried, own]


def one_request(gw: Gateway, upstream: FakeUpstream, user: str) -> tuple[dict[str, str], str]:
    """A coder's request for `user`: its response headers and the prompt the provider got."""
    headers = {"X-Tenure-User": user, "X-Agent-Id": "coder"}
    body = {"model": "m", "messages": [{"role": "user", "content": "hello there"}]}
    resp = httpx.post(gw.v1 + "/chat/completions", json=body, headers=headers, timeout=10)
    assert resp.status_code == 200, resp.text
    return dict(resp.headers), json.dumps(upstream.last("/chat/completions").json["messages"])


def stored(gw: Gateway, user: str) -> tuple[str, str]:
    """The user's injection record (as JSON) and extraction job, once both are written."""
    record = "SELECT to_json(i)::VARCHAR FROM injections i WHERE user_id = ?"
    job = "SELECT turn FROM jobs WHERE user_id = ?"
    gw.settle(lambda: bool(gw.rows(record, [user])) and bool(gw.rows(job, [user])))
    return gw.rows(record, [user])[0][0], gw.rows(job, [user])[0][0]


def untimed_size(stored_json: str) -> int:
    """Its length without its timestamps, whose printed digits vary from write to write."""
    fields = json.loads(stored_json)
    return len(json.dumps({k: v for k, v in fields.items() if not k.endswith("_at")}))


def test_the_persona_is_recorded_as_one_reference_whatever_it_summarises(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    counts = {"ann": 3, "bob": 300}
    everyone = {user: standing_beliefs(user, n) for user, n in counts.items()}
    gw = make_gateway(beliefs=[b for bs in everyone.values() for b in bs], persona="Brief.")
    sizes = []
    for user, count in counts.items():
        headers, prompt = one_request(gw, upstream, user)
        *carried, own = everyone[user]
        assert [b for b in everyone[user] if b.content in prompt] == [own]
        assert headers["x-tenure-injected"] == "1"  # what was rendered, not what was summarised
        version, beliefs = headers["x-tenure-persona"].split("; ")
        assert beliefs == f"beliefs={count}"
        record, job = stored(gw, user)
        assert all(b.id not in record and b.id not in job for b in carried)
        ref = {"version": version, "carries": count}
        assert json.loads(job)["persona"] == ref
        assert json.loads(job)["injected_ids"] == [own.id]
        [api] = httpx.get(gw.url + "/api/injections", params={"user": user}).json()
        assert api["persona_ref"] == ref and api["belief_ids"] == [own.id]
        page = httpx.get(gw.url + "/audit", params={"user": user}).text
        assert f"persona {version} · {count} beliefs" in page
        sizes.append((untimed_size(record), untimed_size(job)))
    # 100 times the beliefs: the record and the job grow by the count's two digits only.
    assert all(later - first <= 2 for first, later in zip(*sizes, strict=True)), sizes


def test_a_record_that_lists_the_personas_beliefs_still_reads(
    make_gateway: Callable[..., Gateway],
) -> None:
    gw = make_gateway(beliefs=[EVERY_AGENT])
    # A record as written before the persona was a reference: its beliefs listed in a layer.
    gw.rows(
        "INSERT INTO injections (request_id, created_at, user_id, agent_id, scopes, model, "
        "endpoint, query, layers, belief_ids, persona, approx_tokens) VALUES ('req-old', "
        "now(), 'alice', NULL, ['user:universal'], 'm', '/v1/chat/completions', 'hello', "
        """'{"persona": ["b-all"]}', ['b-all'], true, 12)"""
    )
    [record] = httpx.get(gw.url + "/api/injections", params={"as_injected": "true"}).json()
    assert record["layers"] == {"persona": ["b-all"]} and record["persona_ref"] is None
    assert record["as_injected"]["b-all"]["canonical_name"] == "answer_length"
    page = httpx.get(gw.url + "/audit").text
    assert "persona prelude" in page and "Prefers short answers." in page
