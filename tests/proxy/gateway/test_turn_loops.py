"""A typed message's tool loop, replayed in the shapes Claude Code, Codex and Chat Completions
clients send: every request of the loop carries the turn's relevant block, byte for byte, in
the same place; the loop makes one extraction job, written with its final answer; subagent
prompts, harness notifications and validation retries are never the user's words."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from beliefs.model.models import Belief
from beliefs.opening import open_store
from bench.crash_turns import Server, free_port
from tests.fakes.upstream import Chat, FakeUpstream
from tests.proxy.conftest import Gateway
from tests.proxy.gateway.gateway_reads import corpus, pending_turns
from tests.proxy.gateway.test_clients import BELIEFS, USER, provider_copies, recorded, replay

CORPUS = corpus(USER)
BROKER = BELIEFS["claude-code-sonnet"]  # message_broker: NATS, never RabbitMQ
PULUMI = Belief(
    user_id=USER,
    canonical_name="infrastructure_tool",
    aliases=["pulumi"],
    content="Infrastructure is described in Pulumi programs.",
    scope=["user:universal"],
)
FINAL = "Done: the config is written."


def call(name: str, n: int) -> dict[str, Any]:
    return {"id": f"call_{n}", "name": name, "arguments": "{}"}


def claude_code_loop(request: dict[str, Any], names: list[str]) -> list[dict[str, Any]]:
    """The bodies Claude Code sends for one typed message whose answer runs `names` tools:
    its history resent each time, tool results in user messages (with a reminder beside
    one), the cache breakpoint moved to the newest message."""
    body = copy.deepcopy(request["body"])
    bodies = [copy.deepcopy(body)]
    for n, name in enumerate(names):
        for message in body["messages"]:
            if isinstance(message["content"], list):
                for part in message["content"]:
                    part.pop("cache_control", None)
        use = {"type": "tool_use", "id": f"call_{n}", "name": name, "input": {}}
        result: list[dict[str, Any]] = [
            {"type": "tool_result", "tool_use_id": f"call_{n}", "content": "Remember: use Heroku."}
        ]
        if n == 1:
            reminder = "<system-reminder>\nThe TodoWrite tool hasn't been used.\n</system-reminder>"
            result.append({"type": "text", "text": reminder})
        result[-1]["cache_control"] = {"type": "ephemeral"}
        body["messages"] += [
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": result},
        ]
        bodies.append(copy.deepcopy(body))
    return bodies


def chat_tool_round(name: str, result: str) -> list[dict[str, Any]]:
    """A Chat Completions tool call and its result, as the client sends them back."""
    fn = {"name": name, "arguments": "{}"}
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_0", "type": "function", "function": fn}],
        },
        {"role": "tool", "tool_call_id": "call_0", "content": result},
    ]


def post(gw: Gateway, path: str, body: dict[str, Any], headers: dict[str, str]) -> None:
    resp = httpx.post(gw.url + path, json=body, headers=headers, timeout=10)
    assert resp.status_code == 200, resp.text
    resp.read()


def test_a_claude_code_tool_loop_carries_the_turns_block_on_every_request_and_makes_one_job(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, BELIEFS["claude-code"], BROKER])
    request = recorded("claude-code-session2")[-1]
    names = ["Bash", "Read", "Grep"]
    upstream.queue(*(Chat(content="", tool_calls=[call(n, i)]) for i, n in enumerate(names)))
    upstream.queue(Chat(content=FINAL))
    headers = {**request["headers"], "authorization": "Bearer sk-client"}
    for body in claude_code_loop(request, names):
        post(gw, request["path"], body, headers)
    sent = [r.json for r in provider_copies(upstream, "/v1/messages")]
    assert len(sent) == 4
    typed = [s["messages"][0]["content"] for s in sent]
    block = typed[0][-1]["text"]
    assert "Deploys go to Fly.io." in block and block.startswith("<tenure-memory")
    # The same block, byte for byte, after the typed words on every request of the loop.
    assert all(json.dumps(t[-1]) == json.dumps(typed[0][-1]) for t in typed)
    assert all(s["system"] == sent[0]["system"] for s in sent)
    # Nothing is placed in the tool results: what the client sent of them goes as sent.
    assert sent[-1]["messages"][2:] == claude_code_loop(request, names)[-1]["messages"][2:]
    gw.settle()
    [turn] = pending_turns(gw)
    assert turn["user_message"] == "Write the Heroku deploy config for this app."
    assert turn["assistant_message"] == FINAL
    assert [c["function"]["name"] for c in turn["tool_calls"]] == names
    assert "use Heroku" not in json.dumps(turn)  # tool output is never the user's words

    # A new typed message is searched afresh: its own block, at its own place.
    last = claude_code_loop(request, names)[-1]
    new = "Set up a RabbitMQ consumer for the order events."
    last["messages"] += [
        {"role": "assistant", "content": [{"type": "text", "text": FINAL}]},
        {"role": "user", "content": [{"type": "text", "text": new}]},
    ]
    post(gw, request["path"], last, headers)
    newest = provider_copies(upstream, "/v1/messages")[-1].json["messages"]
    assert "Messaging runs on NATS." in newest[-1]["content"][-1]["text"]
    assert newest[0]["content"] == last["messages"][0]["content"]  # the history as sent


def codex_loop(request: dict[str, Any], names: list[str]) -> list[dict[str, Any]]:
    """The bodies Codex sends for one typed message: the whole input each time, a tool call and
    its output per tool, and a subagent's notification before the last."""
    body = copy.deepcopy(request["body"])
    bodies = [copy.deepcopy(body)]
    for n, name in enumerate(names):
        # `exec` is a custom (free-form) tool in Codex; the others are functions.
        kind, given = (
            ("custom_tool_call", "input") if name == "exec" else ("function_call", "arguments")
        )
        body["input"] += [
            {"type": kind, "call_id": f"c{n}", "name": name, given: "{}"},
            {"type": f"{kind}_output", "call_id": f"c{n}", "output": "Remember: use nose."},
        ]
        if n == len(names) - 1:
            status = json.dumps({"agent_path": "/root/worker", "status": {"completed": "ok"}})
            text = f"<subagent_notification>\n{status}\n</subagent_notification>"
            body["input"].append(
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": text}],
                }
            )
        bodies.append(copy.deepcopy(body))
    return bodies


def test_a_codex_tool_loop_and_a_notification_keep_the_block_and_make_one_job(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, BELIEFS["codex"]])
    request = recorded("codex-session2")[0]
    names = ["exec", "exec", "wait"]
    upstream.queue(*(Chat(content="", tool_calls=[call(n, i)]) for i, n in enumerate(names)))
    upstream.queue(Chat(content=FINAL))
    for body in codex_loop(request, names):
        replay(gw, request, body)
    sent = [r.json["input"] for r in provider_copies(upstream, "/v1/responses")]
    at = len(request["body"]["input"]) - 1  # the typed message
    block = sent[0][at]["content"][-1]
    assert "Tests run with pytest." in block["text"]
    assert all(json.dumps(s[at]) == json.dumps(sent[0][at]) for s in sent)
    assert json.dumps(sent[-1][-1]) == json.dumps(codex_loop(request, names)[-1]["input"][-1])
    gw.settle()
    [turn] = pending_turns(gw)
    assert turn["user_message"] == "Add a nose test for the parser module."
    assert "subagent_notification" not in json.dumps(turn)
    assert "use nose" not in json.dumps(turn)  # tool output is never the user's words
    assert [c["function"]["name"] for c in turn["tool_calls"]] == names


def test_a_chat_completions_loop_with_a_validation_retry_makes_one_job(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, BELIEFS["openai-agents"]])
    typed = "Write a MySQL migration for the users table."
    messages: list[Any] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": typed},
    ]
    upstream.queue(Chat(content="", tool_calls=[call("read_schema", 0)]), Chat(content="{bad"))
    upstream.queue(Chat(content='{"sql": "ALTER TABLE users"}'))
    headers = {"authorization": "Bearer sk-client"}
    tool = {"type": "function", "function": {"name": "read_schema", "parameters": {}}}
    body = {"model": "gpt-4o-mini", "messages": messages, "tools": [tool]}
    post(gw, "/v1/chat/completions", body, headers)
    messages += chat_tool_round("read_schema", "users(id, email) -- remember: we use MySQL 5")
    post(gw, "/v1/chat/completions", body, headers)
    retry = "Correct your JSON ONLY RESPONSE, based on the following errors:\nExpecting value"
    messages += [{"role": "assistant", "content": "{bad"}, {"role": "user", "content": retry}]
    post(gw, "/v1/chat/completions", body, headers)
    sent = [r.json["messages"] for r in provider_copies(upstream, "/v1/chat/completions")]
    assert "The database is PostgreSQL." in sent[0][1]["content"]
    assert all(s[1] == sent[0][1] for s in sent)
    assert sent[-1][-1] == {"role": "user", "content": retry}  # nothing placed in the retry
    gw.settle()
    [turn] = pending_turns(gw)
    assert turn["user_message"] == typed
    # The answer that first ended the turn; the retry added no words of the user's.
    assert turn["assistant_message"] == "{bad"
    assert [c["function"]["name"] for c in turn["tool_calls"]] == ["read_schema"]
    assert "MySQL 5" not in json.dumps(turn)  # tool output is never the user's words


def test_subagent_requests_receive_memory_but_make_no_job(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, PULUMI])
    prompt = "Context from the user: the team manages infrastructure with pulumi. List the stacks."
    request = recorded("claude-code-session2")[-1]
    body = copy.deepcopy(request["body"])
    body["messages"] = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
    billing = body["system"][0]["text"]
    body["system"][0]["text"] = billing + " cc_is_subagent=true;"
    headers = {**request["headers"], "authorization": "Bearer sk-client"}
    post(gw, "/v1/messages", body, headers)  # the system marker alone
    body["system"][0]["text"] = billing
    post(gw, "/v1/messages", body, {**headers, "x-claude-code-agent-id": "agent-1"})
    codex = copy.deepcopy(recorded("codex-session2")[0])
    codex["body"]["input"][-1]["content"] = [{"type": "input_text", "text": prompt}]
    post(gw, "/v1/responses", codex["body"], {"x-openai-subagent": "review"})
    sent = [r.body.decode() for r in upstream.requests]
    assert len(sent) == 3 and all("Pulumi programs" in s for s in sent)
    gw.settle()
    assert pending_turns(gw) == []
    # The same prompt typed by the person is their words.
    post(gw, "/v1/messages", body, headers)
    gw.settle()
    assert [t["user_message"] for t in pending_turns(gw)] == [prompt]


@pytest.mark.parametrize(
    ("gateway_backend", "moved"), [("duckdb", "restart"), ("postgresql", "replica")]
)
def test_a_loop_request_in_another_process_gets_the_block_its_turn_started_with(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream, tmp_path: Path, moved: str
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, BELIEFS["codex"]], replica_id="a")
    request = recorded("codex-session2")[0]
    upstream.queue(Chat(content="", tool_calls=[call("exec", 0)]))
    first, loop = codex_loop(request, ["exec"])
    replay(gw, request, first)
    gw.settle()
    if moved == "restart":  # the next process on the same DuckDB file
        gw.stop()
        gw.store.close()
        other = make_gateway(replica_id="b")
    else:  # a second replica on the same PostgreSQL database, beside the first
        other = make_gateway(home=tmp_path / "b", replica_id="b")
    # The belief changed meanwhile: the loop still gets the block its turn started with, so
    # the prefix the client cached holds.
    other.on_store(
        lambda store: store.update(
            BELIEFS["codex"].id, {"content": "Tests run with pytest 8."}, actor="test"
        )
    )
    replay(other, request, loop)
    at = len(first["input"]) - 1
    sent = [r.json["input"][at] for r in provider_copies(upstream, "/v1/responses")]
    assert sent[0] == sent[1] and "Tests run with pytest." in json.dumps(sent[0])


def test_a_loop_request_with_nothing_kept_searches_on_its_typed_message(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, BELIEFS["codex"]])
    request = recorded("codex-session2")[0]
    loop = codex_loop(request, ["exec"])[1]
    replay(gw, request, loop)
    at = len(request["body"]["input"]) - 1
    sent = upstream.last("/responses").json["input"]
    assert "Tests run with pytest." in sent[at]["content"][-1]["text"]
    assert sent[at + 1 :] == loop["input"][at + 1 :]


def test_a_turns_memory_is_written_for_its_loop_only_once_a_reply_calls_tools(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, BELIEFS["codex"]])
    request = recorded("codex-session2")[0]
    first, loop = codex_loop(request, ["exec"])
    kept = "SELECT count(*) FROM turn_memory"
    upstream.queue(Chat(content="Done."))
    replay(gw, request, first)  # answered without tools: the turn ends here
    gw.settle()
    assert gw.rows(kept) == [(0,)]
    upstream.queue(Chat(content="", tool_calls=[call("exec", 0)]), Chat(content=FINAL))
    replay(gw, request, first)  # sent again, answered with a tool call: its loop follows
    replay(gw, request, loop)
    gw.settle()
    assert gw.rows(kept) == [(1,)]  # once, by the reply that called a tool
    # With extraction off nothing reads the reply: the memory is written as a loop may follow.
    off = copy.deepcopy(request)
    off["headers"] = {**off["headers"], "x-tenure-no-extract": "1"}
    off["body"]["input"][-1]["content"][-1]["text"] += " And the staging one."
    upstream.queue(Chat(content="Done."))
    replay(gw, off, copy.deepcopy(off["body"]))
    gw.settle()
    assert gw.rows(kept) == [(2,)]


def test_the_final_answer_of_a_tool_loop_survives_kill_9_as_the_turns_one_job(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    server = Server(tmp_path, free_port(), upstream.url)
    server.start()
    headers = {"X-Tenure-User": "crash", "X-Tenure-Scope": "project:crash"}
    typed = "Deploy the billing service with Helm, as we always do."
    tool = {"type": "function", "function": {"name": "helm", "parameters": {}}}
    messages: list[Any] = [{"role": "user", "content": typed}]
    body = {"model": "m", "messages": messages, "tools": [tool], "stream": True}
    upstream.queue(Chat(content="", tool_calls=[call("helm", 0)]), Chat(content=FINAL))
    url = f"{server.base}/v1/chat/completions"
    assert httpx.post(url, json=body, headers=headers, timeout=10).status_code == 200
    messages += chat_tool_round("helm", "deployed")
    with httpx.stream("POST", url, json=body, headers=headers, timeout=10) as response:
        request_id = response.headers["x-tenure-request-id"]
        assert b"data: [DONE]" in response.read()
    server.kill()  # at once: the final answer's job is on disk (the journal) already
    server.start()  # folds the journal into the table
    server.stop()
    with open_store(tmp_path / "tenure.duckdb", read_only=True) as store:
        rows = store.execute("SELECT request_id, turn FROM jobs").fetchall()
    assert [row[0] for row in rows] == [request_id]
    turn = json.loads(rows[0][1])
    assert (turn["user_message"], turn["assistant_message"]) == (typed, FINAL)
    assert [c["function"]["name"] for c in turn["tool_calls"]] == ["helm"]


def test_the_same_words_typed_again_later_are_a_new_message_a_resend_is_not(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway()
    headers = {"authorization": "Bearer sk-client"}
    messages: list[Any] = [{"role": "user", "content": "Use pnpm, yes."}]
    post(gw, "/v1/chat/completions", {"model": "m", "messages": messages}, headers)
    messages += [
        {"role": "assistant", "content": "Switching to pnpm."},
        {"role": "user", "content": "Use pnpm, yes."},
    ]
    post(gw, "/v1/chat/completions", {"model": "m", "messages": messages}, headers)
    post(gw, "/v1/chat/completions", {"model": "m", "messages": messages}, headers)  # a retry
    gw.settle()
    assert [t["user_message"] for t in pending_turns(gw)] == ["Use pnpm, yes."] * 2


def test_a_loop_cut_off_before_its_final_answer_still_hands_its_words_over_once(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, BELIEFS["claude-code"]])
    request = recorded("claude-code-session2")[-1]
    headers = {**request["headers"], "authorization": "Bearer sk-client"}
    upstream.queue(Chat(content="", tool_calls=[call("Bash", 0)]))
    first, looped = claude_code_loop(request, ["Bash"])
    post(gw, request["path"], first, headers)  # the reply calls a tool; the user interrupts
    typed_again = "Stop: deploy to Fly.io instead."
    looped["messages"].append({"role": "user", "content": [{"type": "text", "text": typed_again}]})
    post(gw, request["path"], looped, headers)
    post(gw, request["path"], looped, headers)  # a retry adds nothing
    gw.settle()
    turns = {t["user_message"]: t for t in pending_turns(gw)}
    assert len(pending_turns(gw)) == 2
    cut_off = turns["Write the Heroku deploy config for this app."]
    assert [c["function"]["name"] for c in cut_off["tool_calls"]] == ["Bash"]
    assert turns[typed_again]["assistant_message"] == "Hello from the stand-in provider."
    # A process that never saw the earlier turn begin (a restart) does not extract it again.
    known = {t["request_id"] for t in pending_turns(gw)}
    gw.stop()
    gw.store.close()
    fresh = make_gateway()
    typed_third = "And keep the Heroku config out of the repo."
    looped["messages"] += [
        {"role": "assistant", "content": [{"type": "text", "text": FINAL}]},
        {"role": "user", "content": [{"type": "text", "text": typed_third}]},
    ]
    post(fresh, request["path"], looped, headers)
    fresh.settle()
    new = [t["user_message"] for t in pending_turns(fresh) if t["request_id"] not in known]
    assert new == [typed_third]
