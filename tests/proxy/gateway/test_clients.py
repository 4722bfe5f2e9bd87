"""Requests recorded from real clients, replayed through the gateway with no configuration.

The fixtures under tests/fixtures/clients are what Claude Code (default model and Sonnet),
Codex CLI and the OpenAI Agents SDK sent in two sessions (`tests/real_clients/check_memory.py
--record` wrote them; ids, keys and paths scrubbed, the clients' long prompts shortened). The
Open WebUI one is built from its documented task prompt shapes: a chat call plus title, tag
and follow-up calls whose user message opens with `### Task:`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from beliefs.model.models import Belief
from tests.fakes.upstream import FakeUpstream, Recorded
from tests.proxy.conftest import Gateway
from tests.proxy.gateway.gateway_reads import corpus, injections, pending_turns

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "clients"
USER = "default"  # zero configuration: no header, no mapping


def recorded(name: str) -> list[dict[str, Any]]:
    requests: list[dict[str, Any]] = json.loads((FIXTURES / f"{name}.json").read_text())
    return requests


def replay(gw: Gateway, request: dict[str, Any], body: dict[str, Any] | None = None) -> None:
    resp = httpx.post(
        gw.url + request["path"],
        json=request["body"] if body is None else body,
        headers={**request["headers"], "authorization": "Bearer sk-client"},
        timeout=10,
    )
    assert resp.status_code == 200, resp.text
    resp.read()


def belief(name: str, content: str, aliases: list[str], rejected: list[str]) -> Belief:
    return Belief(
        user_id=USER,
        type="decision",
        canonical_name=name,
        aliases=aliases,
        rejected_alternatives=rejected,
        content=content,
        scope=["user:universal"],
    )


CORPUS = corpus(USER)
PINNED = Belief(
    user_id=USER,
    canonical_name="answer_style",
    content="Answers in short paragraphs.",
    scope=["domain:code"],
    pinned=True,
)
SAID = {
    "claude-code": (
        "Please remember for later: our deploy target is Fly.io and we never use Heroku."
    ),
    "claude-code-sonnet": (
        "Please remember for later: our message broker is NATS and we never use RabbitMQ."
    ),
    "codex": "Please remember for later: our test runner is pytest and we never use nose.",
    "openai-agents": (
        "Please remember for later: our database is PostgreSQL and we never use MySQL."
    ),
}
BELIEFS = {
    "claude-code": belief("deploy_target", "Deploys go to Fly.io.", ["fly.io"], ["heroku"]),
    "claude-code-sonnet": belief(
        "message_broker", "Messaging runs on NATS.", ["nats"], ["rabbitmq"]
    ),
    "codex": belief("test_runner", "Tests run with pytest.", ["pytest"], ["nose"]),
    "openai-agents": belief("primary_database", "The database is PostgreSQL.", ["pg"], ["mysql"]),
}


def provider_copies(upstream: FakeUpstream, path: str) -> list[Recorded]:
    return [r for r in upstream.requests if r.path.split("?")[0] == path]


@pytest.mark.parametrize("client", sorted(SAID))
def test_session_one_hands_the_users_words_to_extraction_once(
    make_gateway: Callable[..., Gateway], client: str
) -> None:
    gw = make_gateway()
    for request in recorded(f"{client}-session1"):
        replay(gw, request)
    gw.settle(lambda: len(pending_turns(gw)) >= 1)
    # Claude Code's title call is a background task: only the real turn becomes a job.
    [turn] = pending_turns(gw)
    assert turn["user_id"] == USER
    assert turn["user_message"] == SAID[client]  # no <system-reminder>, no <environment_context>


@pytest.mark.parametrize("client", sorted(SAID))
def test_session_two_receives_the_belief_at_the_end_of_the_users_message(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream, client: str
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, BELIEFS[client]])
    requests = recorded(f"{client}-session2")
    turn = requests[-1]  # after Claude Code's title call
    replay(gw, turn)
    [sent] = provider_copies(upstream, turn["path"])
    body = sent.json
    items = body.get("messages") or body.get("input")
    last_user = next(m for m in reversed(items) if m.get("role") == "user")
    content = last_user["content"]
    tail = content if isinstance(content, str) else content[-1]["text"]
    assert BELIEFS[client].content in tail
    assert tail.rstrip().endswith("</tenure-memory>")
    gw.settle(lambda: len(injections(gw)) == 1)
    [record] = injections(gw)
    assert record["user_id"] == USER
    assert "<system-reminder>" not in record["query"]
    assert record["query"].endswith(turn_text(client))


def turn_text(client: str) -> str:
    return {
        "claude-code": "Write the Heroku deploy config for this app.",
        "claude-code-sonnet": "Set up a RabbitMQ consumer for the order events.",
        "codex": "Add a nose test for the parser module.",
        "openai-agents": "Write a MySQL migration for the users table.",
    }[client]


@pytest.mark.parametrize("client", ["claude-code", "claude-code-sonnet"])
def test_claude_code_sessions_of_one_device_share_a_user_when_client_ids_are_trusted(
    make_gateway: Callable[..., Gateway], client: str
) -> None:
    gw = make_gateway(trust_client_ids=True)
    for n in (1, 2):
        request = recorded(f"{client}-session{n}")[-1]
        body = request["body"]
        user_id = json.loads(body["metadata"]["user_id"])
        user_id["session_id"] = f"0000000{n}-1111-4111-8111-111111111111"
        replay(gw, request, {**body, "metadata": {"user_id": json.dumps(user_id)}})
    gw.settle(lambda: len(pending_turns(gw)) == 2)
    assert {t["user_id"] for t in pending_turns(gw)} == {user_id["device_id"]}


def test_claude_code_default_model_keeps_its_system_blocks_and_gets_standing_memory_last(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, PINNED], default_scopes=("domain:code",))
    request = recorded("claude-code-session2")[-1]
    replay(gw, request)
    replay(gw, request)
    first, second = (r.json for r in provider_copies(upstream, "/v1/messages"))
    sent_system = first["system"]
    assert sent_system[: len(request["body"]["system"])] == request["body"]["system"]
    assert "Answers in short paragraphs." in sent_system[-1]["text"]
    assert second["system"] == first["system"]  # byte-stable: the prompt cache holds


def test_a_codex_tool_loop_request_carries_the_turns_block_again_and_makes_no_job_of_its_own(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, BELIEFS["codex"], PINNED], default_scopes=("domain:code",))
    request = recorded("codex-session2")[0]
    replay(gw, request)
    call = {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    looped = {**request["body"], "input": [*request["body"]["input"], call, output]}
    replay(gw, request, looped)
    first, second = (r.json for r in provider_copies(upstream, "/v1/responses"))
    assert "Answers in short paragraphs." in first["instructions"]
    assert second["instructions"] == first["instructions"]
    # The typed message carries the same relevant block: the first request's input is the
    # loop request's prefix, byte for byte.
    assert BELIEFS["codex"].content in json.dumps(first["input"])
    assert second["input"] == [*first["input"], call, output]
    gw.settle()
    [turn] = pending_turns(gw)  # the loop request's answer: the typed words went already
    assert turn["user_message"] == turn_text("codex")


def test_one_message_typed_in_open_webui_is_one_extraction_job(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, BELIEFS["openai-agents"]])
    requests = recorded("open-webui-message")
    for request in requests:
        replay(gw, request)
    gw.settle(lambda: len(pending_turns(gw)) >= 1)
    [turn] = pending_turns(gw)
    assert turn["user_message"] == requests[0]["body"]["messages"][-1]["content"]
    # The task calls still receive memory: the title can use what the user is known by.
    copies = provider_copies(upstream, "/v1/chat/completions")
    assert len(copies) == 4
    assert all("The database is PostgreSQL." in r.body.decode() for r in copies)


def test_a_url_user_separates_people_whose_client_only_takes_a_base_url(
    make_gateway: Callable[..., Gateway],
) -> None:
    gw = make_gateway()
    request = recorded("claude-code-session1")[-1]
    for prefix in ("/user/alice", "/user/bob/scope/domain:code"):
        replay(gw, {**request, "path": prefix + request["path"]})
    gw.settle(lambda: len(pending_turns(gw)) == 2)
    turns = pending_turns(gw)
    assert [t["user_id"] for t in turns] == ["alice", "bob"]
    assert "domain:code" in turns[1]["scopes"]
    # The header still wins over the URL.
    resp = httpx.post(
        gw.url + "/user/alice/v1/messages",
        json={**request["body"], "messages": [{"role": "user", "content": "Another thing."}]},
        headers={**request["headers"], "x-tenure-user": "carol"},
        timeout=10,
    )
    assert resp.status_code == 200
    gw.settle(lambda: len(pending_turns(gw)) == 3)
    assert pending_turns(gw)[2]["user_id"] == "carol"
