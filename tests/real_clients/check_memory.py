"""Real agents, two sessions each: does session 2 receive what session 1 said?

Runs the installed Claude Code (`claude -p`, its default model and a Sonnet model; checked
with 2.1.197), Codex CLI (`codex exec`; 0.171.0) and, when `openai-agents` is installed (0.24.0,
`pip install openai-agents==0.24.0`: not a project dependency), the OpenAI Agents SDK
(`Runner.run` with its default model and one function tool) against a real `tenure serve`
process in front of the stand-in provider. Each client is pointed at the gateway the way a
user would do it: Claude Code with `ANTHROPIC_BASE_URL` only, Codex with a custom provider in
a fresh `CODEX_HOME`, the SDK with `OPENAI_BASE_URL`. No identity header, no scope: zero
configuration.

Session 1 states a fact. The stand-in plays the extraction model: it answers an extraction
request with a belief only when that request carries the fact and none of the harness text,
so a belief in the store proves the user's words reached extraction. Session 2 asks about it;
the check passes when the provider's copy of session 2's request carries the belief.

Then, for Claude Code, Codex and the SDK, the work scenarios of `work.py`: a tool loop, a
correction that does not name the old option, and (Claude Code) a subagent. One line each,
PASS or FAIL.

Not part of `make test` (it needs npm packages):

    npm install -g @anthropic-ai/claude-code @openai/codex
    python -m tests.real_clients.check_memory [--record tests/fixtures/clients]

`--record DIR` writes each session's requests (and each tool loop's and subagent run's) as the
provider received them, scrubbed of keys, device, account and session ids and local paths, as
fixtures for the replay tests.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proxy.gateway.protocols.anthropic_messages import ANTHROPIC_MESSAGES
from proxy.gateway.protocols.chat_completions import CHAT_COMPLETIONS
from proxy.gateway.protocols.responses import RESPONSES
from tests.fakes.upstream import Chat, FakeUpstream, Recorded
from tests.real_clients.gateway import FAKE_KEY, Gateway, run_agents, run_claude, run_codex
from tests.real_clients.model import ModelStandIn, is_extraction
from tests.real_clients.work import (
    Record,
    Run,
    Verdict,
    check_correction,
    check_subagent,
    check_tool_loop,
)

SCRUBBED_HOME = "/home/user"
SCRUBBED_PROJECT = "/home/user/project"


@dataclass(frozen=True)
class Fact:
    """What session 1 says, the belief the stand-in extracts from it, and session 2's ask."""

    said: str
    canonical_name: str
    content: str
    aliases: list[str]
    rejected: list[str]
    asked: str


FACTS = {
    "claude-code": Fact(
        said="Please remember for later: our deploy target is Fly.io and we never use Heroku.",
        canonical_name="deploy_target",
        content="Deploys go to Fly.io; Heroku is ruled out.",
        aliases=["fly.io", "fly"],
        rejected=["heroku"],
        asked="Write the Heroku deploy config for this app.",
    ),
    "claude-code-sonnet": Fact(
        said="Please remember for later: our message broker is NATS and we never use RabbitMQ.",
        canonical_name="message_broker",
        content="Messaging runs on NATS; RabbitMQ is ruled out.",
        aliases=["nats", "broker"],
        rejected=["rabbitmq"],
        asked="Set up a RabbitMQ consumer for the order events.",
    ),
    "codex": Fact(
        said="Please remember for later: our test runner is pytest and we never use nose.",
        canonical_name="test_runner",
        content="Tests run with pytest; nose is ruled out.",
        aliases=["pytest", "tests"],
        rejected=["nose"],
        asked="Add a nose test for the parser module.",
    ),
    "openai-agents": Fact(
        said="Please remember for later: our database is PostgreSQL and we never use MySQL.",
        canonical_name="primary_database",
        content="The database is PostgreSQL; MySQL is ruled out.",
        aliases=["postgres", "postgresql"],
        rejected=["mysql"],
        asked="Write a MySQL migration for the users table.",
    ),
}
HARNESS_MARKERS = ("<system-reminder>", "<environment_context>", "<user_instructions>")


def extraction_matcher(fact: Fact) -> Callable[[Recorded], bool]:
    """An extraction request (OpenAI `response_format` or LiteLLM's Anthropic tool) that
    carries the fact and no harness text."""

    def match(rec: Recorded) -> bool:
        text = rec.body.decode("utf-8", "replace")
        return (
            is_extraction(rec)
            and fact.said.split(":")[1].strip()[:30] in text
            and not any(marker in text for marker in HARNESS_MARKERS)
        )

    return match


def extraction_reply(fact: Fact) -> Chat:
    payload = {
        "new_beliefs": [
            {
                "type": "decision",
                "canonical_name": fact.canonical_name,
                "aliases": fact.aliases,
                "rejected_alternatives": fact.rejected,
                "content": fact.content,
                "why_it_matters": f"Follow this: {fact.content}",
                "scope": ["user:universal"],
                "epistemic_status": "active",
                "confidence": 0.9,
            }
        ],
        "belief_updates": [],
        "entity_updates": [],
        "resolved_open_questions": [],
    }
    text = json.dumps(payload)
    match = extraction_matcher(fact)
    # The same reply whichever way the extractor asks: JSON content or LiteLLM's tool call.
    return Chat(
        content=text,
        tool_calls=[{"id": "t1", "name": "json_tool_call", "arguments": text}],
        match=match,
    )


# -- scrubbing and recording --------------------------------------------------------------------

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_HEX64 = re.compile(r"\b[0-9a-f]{64}\b")
_KEEP_HEADERS = ("content-type", "anthropic-version", "anthropic-beta", "openai-beta", "accept")
# Kept for what they mark (a subagent's request), their values scrubbed.
_MARKER_HEADERS = ("x-claude-code-agent-id", "x-openai-subagent")


def scrub_text(text: str, paths: dict[str, str]) -> str:
    for local, public in paths.items():
        text = text.replace(local, public)
    text = _UUID.sub("00000000-0000-0000-0000-000000000000", text)
    text = _HEX64.sub("0" * 64, text)
    return text.replace(FAKE_KEY, "sk-scrubbed")


KEEP_CHARS = 160


def _shorten(text: str) -> str:
    if len(text) <= KEEP_CHARS:
        return text
    return f"{text[:KEEP_CHARS]}[… {len(text) - KEEP_CHARS} characters of the client's prompt]"


def _shorten_parts(content: Any) -> Any:
    if isinstance(content, str):
        return _shorten(content)
    if isinstance(content, list):
        return [
            {**p, "text": _shorten(p["text"])}
            if isinstance(p, dict) and isinstance(p.get("text"), str)
            else p
            for p in content
        ]
    return content


def _shorten_tools(tools: Any) -> None:
    """Every `description` in tool definitions (schemas included) shortened, in place."""
    if isinstance(tools, list):
        for tool in tools:
            _shorten_tools(tool)
    elif isinstance(tools, dict):
        for key, value in tools.items():
            if key == "description" and isinstance(value, str):
                tools[key] = _shorten(value)
            else:
                _shorten_tools(value)


def _outline_schemas(tools: Any) -> None:
    """Tool schemas reduced to their property names, in place."""
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        for key in ("input_schema", "parameters"):
            schema = tool.get(key)
            if isinstance(schema, dict):
                names = schema.get("properties") or {}
                tool[key] = {"type": "object", "properties": {name: {} for name in names}}
        _outline_schemas(tool.get("tools"))


def as_sent_by_client(path: str, body: dict[str, Any]) -> dict[str, Any]:
    """The provider's copy of a request without what the gateway placed in it."""
    if path.endswith("/responses"):
        body = RESPONSES.without_echoed_memory(body)
        if body.get("instructions") == "":
            del body["instructions"]
        return body
    protocol = ANTHROPIC_MESSAGES if path.endswith("/messages") else CHAT_COMPLETIONS
    body = protocol.without_echoed_memory(body)
    body["messages"] = [m for m in body["messages"] if m.get("content") not in ("", [])]
    return body


def scrub(rec: Recorded, paths: dict[str, str]) -> dict[str, Any]:
    """The request with ids, keys and local paths replaced; the clients' own long prompts
    (system text, developer messages, tool manuals) shortened, since only their shape and
    place matter here. User messages stay whole: they hold the harness text."""
    headers = {k: v for k, v in rec.headers.items() if k in _KEEP_HEADERS}
    headers |= {k: "scrubbed" for k in rec.headers if k in _MARKER_HEADERS}
    path = rec.path.split("?")[0]
    body = as_sent_by_client(path, json.loads(scrub_text(rec.body.decode("utf-8"), paths)))
    _shorten_tools(body.get("tools"))
    _outline_schemas(body.get("tools"))
    if "system" in body:
        body["system"] = _shorten_parts(body["system"])
    for item in [*(body.get("messages") or []), *(body.get("input") or [])]:
        if not isinstance(item, dict):
            continue
        _shorten_tools(item.get("tools"))
        _outline_schemas(item.get("tools"))
        if item.get("role") in ("system", "developer") and "content" in item:
            item["content"] = _shorten_parts(item["content"])
    return {"method": rec.method, "path": path, "headers": headers, "body": body}


def is_client_call(rec: Recorded) -> bool:
    return rec.method == "POST" and bool(rec.body) and not is_extraction(rec)


def write_fixture(target: Path, recs: list[Recorded], paths: dict[str, str]) -> None:
    shapes = [scrub(r, paths) for r in recs]
    target.write_text(json.dumps(shapes, indent=1, ensure_ascii=False) + "\n")


# -- the check ----------------------------------------------------------------------------------


@dataclass
class Outcome:
    client: str
    extracted: bool
    delivered: bool
    users: list[str]
    detail: str


def check_client(
    client: str,
    run: Callable[[str], str],
    gateway: Gateway,
    upstream: FakeUpstream,
    record: Path | None,
    paths: dict[str, str],
) -> Outcome:
    fact = FACTS[client]
    upstream.queue(extraction_reply(fact))
    start = len(upstream.requests)
    first = run(fact.said)
    session_1 = [r for r in upstream.requests[start:] if is_client_call(r)]
    belief = gateway.wait_for_belief(fact.canonical_name)
    users = sorted({job["turn"]["user_id"] for job in gateway.jobs()})
    if record is not None:
        write_fixture(record / f"{client}-session1.json", session_1, paths)
    if belief is None:
        return Outcome(client, False, False, users, f"no belief extracted; client said: {first}")
    if os.environ.get("TENURE_CHECK_DUMP"):
        dump = [json.loads(r.body) for r in upstream.requests[start:] if is_extraction(r)]
        Path(os.environ["TENURE_CHECK_DUMP"]).write_text(json.dumps(dump, indent=1))
    middle = len(upstream.requests)
    second = run(fact.asked)
    session_2 = [r for r in upstream.requests[middle:] if is_client_call(r)]
    delivered = any(fact.content in r.body.decode("utf-8", "replace") for r in session_2)
    if record is not None:
        write_fixture(record / f"{client}-session2.json", session_2, paths)
    detail = f"session 2 sent {len(session_2)} request(s); answer: {second[:80]!r}"
    return Outcome(client, True, delivered, users, detail)


def runner(client: str, gateway: Gateway, home: Path) -> Run:
    """How to send one typed message with `client` through `gateway`."""
    if client == "codex":
        return lambda p: run_codex(gateway, gateway.workdir, home, p)
    if client == "openai-agents":
        return lambda p: run_agents(gateway, p)
    model = "claude-sonnet-4-5" if client == "claude-code-sonnet" else None
    return lambda p: run_claude(gateway, gateway.workdir, home, p, model)


def missing(client: str) -> str | None:
    """Why `client` cannot run here, or None."""
    if client.startswith("claude") and shutil.which("claude") is None:
        return "claude is not installed"
    if client == "codex" and shutil.which("codex") is None:
        return "codex is not installed"
    if client == "openai-agents" and importlib.util.find_spec("agents") is None:
        return "openai-agents is not installed"
    return None


def check_work(
    client: str, upstream: ModelStandIn, gateway: Gateway, root: Path, record: Record
) -> list[Verdict]:
    """The tool loop (and Claude Code's subagent) on the shared gateway, whose store holds the
    client's fact by now; the correction on a fresh one, so no other client's belief is in it."""
    home = gateway.workdir.parent
    fact = FACTS[client]
    verdict, loop = check_tool_loop(
        client, runner(client, gateway, home), upstream, gateway, (fact.asked, fact.content)
    )
    record("tool-loop", loop)
    verdicts = [verdict]
    if client == "claude-code":
        verdicts.append(check_subagent(runner(client, gateway, home), upstream, gateway, record))
    fresh_home = root / f"correction-{client}"
    fresh_home.mkdir()
    fresh = Gateway(upstream, fresh_home, gateway.workdir)
    try:
        fresh.seed()
        run = runner(client, fresh, home)
        verdicts += check_correction(client, run, upstream, fresh)
    finally:
        fresh.stop()
    return verdicts


WORK_CLIENTS = ("claude-code", "codex", "openai-agents")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", type=Path, help="write scrubbed request fixtures here")
    parser.add_argument(
        "--only", action="append", choices=sorted(FACTS), help="run only these clients"
    )
    args = parser.parse_args()
    chosen = args.only or list(FACTS)
    if args.record:
        args.record.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="tenure-clients-"))
    home = root / "home"
    workdir = home / "project"
    workdir.mkdir(parents=True)
    (workdir / "app.py").write_text("print('hello')\n")
    paths = {
        str(workdir): SCRUBBED_PROJECT,
        str(home): SCRUBBED_HOME,
        str(root): "/tmp",
        str(workdir).replace("/", "-"): SCRUBBED_PROJECT.replace("/", "-"),
    }
    outcomes: list[Outcome] = []
    verdicts: list[Verdict] = []
    upstream = ModelStandIn()
    with upstream:
        gateway = Gateway(upstream, root, workdir)
        try:
            gateway.seed()
            for client in chosen:
                why = missing(client)
                if why:
                    outcomes.append(Outcome(client, False, False, [], why))
                    continue
                run = runner(client, gateway, home)
                outcomes.append(check_client(client, run, gateway, upstream, args.record, paths))
                if client not in WORK_CLIENTS:
                    continue

                def record(name: str, recs: list[Recorded], client: str = client) -> None:
                    if args.record is not None:
                        write_fixture(args.record / f"{client}-{name}.json", recs, paths)

                verdicts += check_work(client, upstream, gateway, root, record)
        finally:
            gateway.stop()
    ok = True
    for o in outcomes:
        passed = o.extracted and o.delivered
        ok = ok and passed
        verdict = "PASS" if passed else "FAIL"
        print(
            f"{verdict} {o.client}: extracted={o.extracted} delivered_in_session_2={o.delivered} "
            f"job_users={o.users} — {o.detail}"
        )
    for v in verdicts:
        ok = ok and v.passed
        print(f"{'PASS' if v.passed else 'FAIL'} {v.client} {v.scenario}: {v.detail}")
    if ok:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print(f"kept {root} for a look (gateway.log)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
