"""Per-request controls, chat commands and where identity and scope come from."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.fakes.upstream import FakeUpstream
from tests.proxy import beliefs_seed as seed
from tests.proxy.conftest import Gateway, no_request_to

QUESTION = "Which pg version do we run?"
ALICE = {"X-Tenure-User": seed.USER, "X-Tenure-Scope": "domain:code"}


@pytest.fixture
def gw(make_gateway: Callable[..., Gateway]) -> Gateway:
    return make_gateway(beliefs=seed.ALL, persona=seed.PERSONA)


def ask(
    gw: Gateway, text: str = QUESTION, headers: dict[str, str] | None = None, **extra: Any
) -> httpx.Response:
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}], **extra}
    return httpx.post(gw.v1 + "/chat/completions", json=body, headers=headers or ALICE)


def jobs(gw: Gateway) -> list[dict[str, Any]]:
    return [json.loads(r[0]) for r in gw.rows("SELECT turn FROM jobs ORDER BY created_at")]


def injections(gw: Gateway) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = httpx.get(gw.url + "/api/injections").json()
    return records


def test_incognito_no_memory_no_record_no_job(gw: Gateway, upstream: FakeUpstream) -> None:
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": QUESTION}]}
    raw = json.dumps(body).encode()
    resp = httpx.post(
        gw.v1 + "/chat/completions",
        content=raw,
        headers={**ALICE, "X-Tenure-Incognito": "1", "content-type": "application/json"},
    )
    assert resp.status_code == 200 and resp.headers["x-tenure-injected"] == "0"
    rec = upstream.last("/chat/completions")
    assert rec.body == raw  # forwarded byte for byte
    assert not any(k.startswith("x-tenure") for k in rec.headers)
    gw.settle()
    assert injections(gw) == [] and jobs(gw) == []


def test_no_inject_still_extracts(gw: Gateway, upstream: FakeUpstream) -> None:
    resp = ask(gw, headers={**ALICE, "X-Tenure-No-Inject": "true"})
    assert resp.headers["x-tenure-injected"] == "0"
    assert "tenure-memory" not in upstream.last().body.decode()
    gw.settle(lambda: len(jobs(gw)) == 1)
    assert injections(gw) == []
    assert jobs(gw)[0]["user_message"] == QUESTION


def test_no_extract_still_injects(gw: Gateway, upstream: FakeUpstream) -> None:
    resp = ask(gw, headers={**ALICE, "X-Tenure-No-Extract": "1"})
    assert int(resp.headers["x-tenure-injected"]) >= 1
    gw.settle(lambda: len(injections(gw)) == 1)
    assert jobs(gw) == []


def test_chat_commands_answer_without_upstream_and_persist(
    gw: Gateway, upstream: FakeUpstream, make_gateway: Callable[..., Gateway]
) -> None:
    sdk = gw.openai()
    user = {"X-Tenure-User": seed.USER}
    with no_request_to(upstream):
        reply = sdk.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "!inject off"}],
            extra_headers=user,
        )
        assert "memory injection is now off" in (reply.choices[0].message.content or "")
        stream = sdk.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "!scope domain:code, project:billing"}],
            stream=True,
            stream_options={"include_usage": True},
            extra_headers=user,
        )
        chunks = list(stream)
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert "domain:code, project:billing" in text
        assert chunks[-1].usage is not None
    resp = ask(gw, headers=user)
    assert resp.headers["x-tenure-injected"] == "0"
    assert "tenure-memory" not in upstream.last().body.decode()

    ask(gw, "!inject on", headers=user)
    ask(gw, "!extract off", headers=user)
    upstream.reset()
    resp = ask(gw, headers=user)  # scope from `!scope`: the domain:code belief is found
    assert "b-postgres" in upstream.last().body.decode()
    gw.settle(lambda: len(injections(gw)) == 1)
    assert injections(gw)[0]["scopes"] == ["domain:code", "project:billing", "user:universal"]
    request_id = resp.headers["x-tenure-request-id"]
    assert request_id not in [job["request_id"] for job in jobs(gw)]  # extraction is off

    # The state lives in the database: a restarted gateway still has it.
    rows = gw.rows("SELECT user_id, agent_id, scopes, extract, inject FROM chat_state")
    assert rows == [(seed.USER, "", ["domain:code", "project:billing"], False, True)]
    gw.stop()
    gw.store.close()
    again = make_gateway()
    text = ask(again, "!scope", headers=user).json()["choices"][0]["message"]["content"]
    assert text == "Tenure: chat scope is domain:code, project:billing (plus user:universal)."


def test_chat_command_state_is_per_agent(gw: Gateway, upstream: FakeUpstream) -> None:
    ask(gw, "!inject off", headers={"X-Tenure-User": seed.USER, "X-Agent-Id": "cline"})
    resp = ask(gw, headers={**ALICE, "X-Agent-Id": "cline"})
    assert resp.headers["x-tenure-injected"] == "0"
    resp = ask(gw, headers={**ALICE, "X-Agent-Id": "continue"})
    assert int(resp.headers["x-tenure-injected"]) >= 1


def test_bad_chat_command_argument_is_answered(gw: Gateway, upstream: FakeUpstream) -> None:
    with no_request_to(upstream):
        text = ask(gw, "!scope not:a-scope").json()["choices"][0]["message"]["content"]
        assert "not one of user:universal" in text and "Scope unchanged" in text
        text = ask(gw, "!extract maybe").json()["choices"][0]["message"]["content"]
        assert "takes on or off" in text


def test_anthropic_chat_command_streams_events(gw: Gateway, upstream: FakeUpstream) -> None:
    sdk = gw.anthropic()
    with (
        no_request_to(upstream),
        sdk.messages.stream(
            model="claude-sonnet-4",
            max_tokens=10,
            messages=[{"role": "user", "content": "!extract"}],
        ) as stream,
    ):
        text = "".join(stream.text_stream)
    assert text == "Tenure: extraction is on for this chat."


@pytest.mark.parametrize(
    ("path", "headers", "extra", "user", "scopes"),
    [
        ("/v1", ALICE, {}, "alice", ["domain:code", "user:universal"]),
        (
            "/v1",
            {},
            {"metadata": {"tenure_user": "alice", "tenure_scope": "domain:code"}},
            "alice",
            ["domain:code", "user:universal"],
        ),
        (
            "/v1",
            {},
            {"metadata": {"tenure_user": "bob", "tenure_scope": ["domain:code"], "run": "r1"}},
            "bob",
            ["domain:code", "user:universal"],
        ),
        (
            "/scope/domain:code/sql/v1",
            {"X-Tenure-User": "alice"},
            {},
            "alice",
            ["domain:code/sql", "user:universal"],
        ),
        (
            "/scope/domain:code%2Fsql/v1",
            {"X-Tenure-User": "alice"},
            {},
            "alice",
            ["domain:code/sql", "user:universal"],
        ),
        (
            "/scope/domain:code/v1",
            {"X-Tenure-User": "alice"},
            {},
            "alice",
            ["domain:code", "user:universal"],
        ),
        (
            "/scope/project:billing/v1",
            {"X-Tenure-User": "alice", "X-Tenure-Scope": "domain:code"},
            {},
            "alice",
            ["domain:code", "project:billing", "user:universal"],
        ),
        (
            "",
            {"X-Tenure-User": "alice", "X-Tenure-Scope": "domain:code"},
            {},
            "alice",
            ["domain:code", "user:universal"],
        ),
    ],
)
def test_identity_and_scope_sources(
    gw: Gateway,
    upstream: FakeUpstream,
    path: str,
    headers: dict[str, str],
    extra: dict[str, Any],
    user: str,
    scopes: list[str],
) -> None:
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": QUESTION}], **extra}
    resp = httpx.post(gw.url + path + "/chat/completions", json=body, headers=headers)
    assert resp.status_code == 200
    assert upstream.last().path == "/v1/chat/completions"
    gw.settle(lambda: len(injections(gw)) == 1)
    record = injections(gw)[0]
    assert (record["user_id"], record["scopes"]) == (user, scopes)
    assert record["request_id"] == resp.headers["x-tenure-request-id"]
    # Tenure's own metadata keys stay here (a provider may refuse keys it does not know);
    # everything else goes upstream unchanged.
    sent = upstream.last().json
    for key, value in extra.items():
        if key == "metadata":
            kept = {k: v for k, v in value.items() if not k.startswith("tenure_")}
            assert sent.get("metadata") == (kept or None)
        else:
            assert sent[key] == value


def test_agent_and_default_user(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=seed.ALL, default_user="alice", default_scopes=("domain:code",))
    resp = ask(gw, headers={"X-Agent-Id": "cline"})
    assert resp.status_code == 200
    gw.settle(lambda: len(injections(gw)) == 1)
    record = injections(gw)[0]
    assert (record["user_id"], record["agent_id"]) == ("alice", "cline")
    assert record["scopes"] == ["domain:code", "user:universal"]


def test_bad_scope_header_is_a_400_naming_it(gw: Gateway, upstream: FakeUpstream) -> None:
    with no_request_to(upstream):
        resp = ask(gw, headers={"X-Tenure-Scope": "domain:code,galaxy"})
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert error["param"] == "X-Tenure-Scope" and "'galaxy'" in error["message"]
