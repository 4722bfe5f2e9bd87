"""Real agents, two sessions each: does session 2 receive what session 1 said?

Runs the installed Claude Code (`claude -p`, its default model and a Sonnet model), Codex CLI
(`codex exec`) and, when `openai-agents` is installed, the OpenAI Agents SDK (`Runner.run`
with its default model) against a real `tenure serve` process in front of the stand-in
provider. Each client is pointed at the gateway the way a user would do it: Claude Code with
`ANTHROPIC_BASE_URL` only, Codex with a custom provider in a fresh `CODEX_HOME`, the SDK with
`OPENAI_BASE_URL`. No identity header, no scope: zero configuration.

Session 1 states a fact. The stand-in plays the extraction model: it answers an extraction
request with a belief only when that request carries the fact and none of the harness text,
so a belief in the store proves the user's words reached extraction. Session 2 asks about it;
the check passes when the provider's copy of session 2's request carries the belief.

Not part of `make test` (it needs npm packages):

    npm install -g @anthropic-ai/claude-code @openai/codex
    python -m tests.real_clients.check_memory [--record tests/fixtures/clients]

`--record DIR` writes each session's requests as the provider received them, scrubbed of
keys, device, account and session ids and local paths, as fixtures for the replay tests.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from proxy.gateway.placement import without_echoed_memory
from proxy.gateway.responses_body import without_echoed_memory as without_echoed_responses_memory
from tests.fakes.upstream import Chat, FakeUpstream, Recorded

FAKE_KEY = "sk-standin-not-a-key"
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
# A realistic store holds more than one belief: BM25 needs a corpus to find a term rare.
BACKGROUND = [
    ("editor_choice", "Edits code in Helix."),
    ("shell_choice", "Uses fish as the shell."),
    ("ci_provider", "CI runs on GitHub Actions."),
    ("code_style", "Prefers small pure functions."),
    ("docs_tool", "Writes docs in MkDocs."),
    ("cloud_region", "Deploys to eu-west."),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


EXTRACTOR_PROMPT = "You keep the long-term memory of an AI assistant."


def is_extraction(rec: Recorded) -> bool:
    """The extractor's request, however LiteLLM shaped it for the provider."""
    return EXTRACTOR_PROMPT in rec.body.decode("utf-8", "replace")


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


class Gateway:
    """A `tenure serve` process over the stand-in, in a temporary TENURE_HOME."""

    def __init__(self, upstream: FakeUpstream, home: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "TENURE_HOME": str(home / "tenure"),
            "TENURE_PORT": str(self.port),
            "TENURE_UPSTREAM_URL": upstream.url,
            "TENURE_EXTRACT_BACKOFF_S": "0.2",
            "TENURE_LOG_LEVEL": "warning",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
        }
        self.log = open(home / "gateway.log", "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from proxy.cli.main import main; sys.exit(main())",
                "serve",
            ],
            env=env,
            stderr=self.log,
            stdout=self.log,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                health = httpx.get(f"{self.url}/healthz", timeout=1)
                if health.status_code == 200 and not health.json()["loading"]:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError(f"the gateway did not start; see {home / 'gateway.log'}")

    def beliefs(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = httpx.get(f"{self.url}/api/beliefs", timeout=30).json()
        return found

    def jobs(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = httpx.get(f"{self.url}/api/jobs", timeout=30).json()
        return found

    def seed(self) -> None:
        for name, content in BACKGROUND:
            body = {"canonical_name": name, "content": content, "scope": ["user:universal"]}
            httpx.post(f"{self.url}/api/beliefs", json=body, timeout=10).raise_for_status()

    def wait_for_belief(self, name: str, timeout: float = 60) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                for belief in self.beliefs():
                    if belief["canonical_name"] == name:
                        return belief
            except httpx.TimeoutException:
                pass  # the gateway is busy (its first extraction loads LiteLLM): ask again
            time.sleep(0.3)
        return None

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(20)
        self.log.close()


# -- the clients --------------------------------------------------------------------------------


def run_claude(gateway: Gateway, workdir: Path, home: Path, prompt: str, model: str | None) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": gateway.url,
        "ANTHROPIC_API_KEY": FAKE_KEY,
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }
    command = ["claude", "-p", prompt]
    if model:
        command += ["--model", model]
    done = subprocess.run(
        command,
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    return (done.stdout + done.stderr).strip()


def run_codex(gateway: Gateway, workdir: Path, home: Path, prompt: str) -> str:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model_provider = "tenure"\n\n'
        "[model_providers.tenure]\n"
        'name = "Tenure"\n'
        f'base_url = "{gateway.url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "TENURE_CLIENT_KEY"\n'
    )
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "TENURE_CLIENT_KEY": FAKE_KEY,
    }
    command = ["codex", "exec", "--skip-git-repo-check", "--sandbox", "read-only", prompt]
    done = subprocess.run(
        command,
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    return (done.stdout + done.stderr).strip()


def run_agents(gateway: Gateway, prompt: str) -> str:
    code = (
        "import asyncio, sys\n"
        "from agents import Agent, Runner, set_tracing_disabled\n"
        "set_tracing_disabled(True)\n"
        "agent = Agent(name='assistant', instructions='You are a helpful assistant.')\n"
        "result = asyncio.run(Runner.run(agent, sys.argv[1]))\n"
        "print(result.final_output)\n"
    )
    env = {**os.environ, "OPENAI_BASE_URL": f"{gateway.url}/v1", "OPENAI_API_KEY": FAKE_KEY}
    done = subprocess.run(
        [sys.executable, "-c", code, prompt],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return (done.stdout + done.stderr).strip()


# -- scrubbing and recording --------------------------------------------------------------------

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_HEX64 = re.compile(r"\b[0-9a-f]{64}\b")
_KEEP_HEADERS = ("content-type", "anthropic-version", "anthropic-beta", "openai-beta", "accept")


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
        body = without_echoed_responses_memory(body)
        if body.get("instructions") == "":
            del body["instructions"]
        return body
    body = without_echoed_memory(body, anthropic=path.endswith("/messages"))
    body["messages"] = [m for m in body["messages"] if m.get("content") not in ("", [])]
    return body


def scrub(rec: Recorded, paths: dict[str, str]) -> dict[str, Any]:
    """The request with ids, keys and local paths replaced; the clients' own long prompts
    (system text, developer messages, tool manuals) shortened, since only their shape and
    place matter here. User messages stay whole: they hold the harness text."""
    headers = {k: v for k, v in rec.headers.items() if k in _KEEP_HEADERS}
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
    runners: dict[str, Callable[[str], str]] = {}
    outcomes: list[Outcome] = []
    with FakeUpstream() as upstream:
        gateway = Gateway(upstream, root)
        try:
            gateway.seed()
            runners = {
                "claude-code": lambda p: run_claude(gateway, workdir, home, p, None),
                "claude-code-sonnet": lambda p: run_claude(
                    gateway, workdir, home, p, "claude-sonnet-4-5"
                ),
                "codex": lambda p: run_codex(gateway, workdir, home, p),
                "openai-agents": lambda p: run_agents(gateway, p),
            }
            for client in chosen:
                if client.startswith("claude") and shutil.which("claude") is None:
                    outcomes.append(Outcome(client, False, False, [], "claude is not installed"))
                    continue
                if client == "codex" and shutil.which("codex") is None:
                    outcomes.append(Outcome(client, False, False, [], "codex is not installed"))
                    continue
                outcome = check_client(
                    client, runners[client], gateway, upstream, args.record, paths
                )
                outcomes.append(outcome)
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
    if ok:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print(f"kept {root} for a look (gateway.log)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
