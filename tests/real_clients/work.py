"""Memory through an agent's work, with real clients: a tool loop, a correction, a subagent.

- Tool loop: the agent model asks for a tool the client really has (Claude Code's `Read`,
  Codex's `exec`), then answers once the result is back. Passes when every request of the loop
  as the provider received it carries the same relevant block byte for byte, holding the fact
  an earlier session stated, and the typed message made exactly one extraction job.
- Correction: session 1 states "our primary database is PostgreSQL 16"; session 2 says billing
  now runs on CockroachDB 24, without naming the old one. The extraction model answers as a
  real one does: a new belief while the old one is not shown to it, a superseding update once
  it is. Session 3 asks which database the new ledger service should use; a fourth session
  asks again naming the old option. Each passes when its request carries a CockroachDB belief
  whose directive names CockroachDB with PostgreSQL ruled out, and no directive still says
  "PostgreSQL 16".
- Subagent (Claude Code): the parent model calls its `Agent` tool with a prompt it wrote
  ("Context from the user: … pulumi …"); the extraction model would store Pulumi if those words
  reached it as the user's. Passes when the subagent's request was made and no belief names
  Pulumi.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.fakes.upstream import Recorded
from tests.real_clients.gateway import Gateway
from tests.real_clients.model import (
    ModelStandIn,
    agents_read,
    claude_agent,
    claude_read,
    codex_exec,
    extraction,
    is_agent_call,
    is_extraction,
    relevant_blocks,
    subagent_reply,
    tool_loop,
    user_words,
)

Run = Callable[[str], str]
Record = Callable[[str, list[Recorded]], None]


@dataclass
class Verdict:
    client: str
    scenario: str
    passed: bool
    detail: str


def check_tool_loop(
    client: str, run: Run, upstream: ModelStandIn, gateway: Gateway, fact: tuple[str, str]
) -> tuple[Verdict, list[Recorded]]:
    """One typed message (`fact`'s question) that reads app.py before answering; its loop must
    carry the belief (`fact`'s content) an earlier session stated."""
    asked, expected = fact
    typed = f"{asked} Read app.py first, then answer."
    app = str(gateway.workdir / "app.py")
    calls = {"codex": codex_exec(), "openai-agents": agents_read(app)}
    call = calls.get(client) or claude_read(app)
    answer = "Read it; here is the config."
    answered, replies = tool_loop(typed, call, answer)
    upstream.queue(*replies)
    said = run(typed)
    jobs = gateway.settled_jobs(typed)
    blocks = [relevant_blocks(r) for r in answered]
    first = blocks[0] if blocks else []
    same = len(answered) == 2 and all(b == first and len(b) == 1 for b in blocks)
    holds = bool(first) and expected in first[0]
    # The one job holds the loop's final answer, not the reply that called the tool.
    final = [job["turn"]["assistant_message"] == answer for job in jobs]
    passed = same and holds and final == [True]
    detail = (
        f"loop requests={len(answered)} relevant blocks per request={[len(b) for b in blocks]} "
        f"byte-identical={same} holds the fact={holds} jobs for the typed message={len(jobs)} "
        f"job holds the final answer={final}"
    )
    if len(answered) < 2:
        detail += f"; client said: {said[-200:]!r}"
    return Verdict(client, "tool-loop", passed, detail), answered


# -- the correction -----------------------------------------------------------------------------

STATED = "Please remember: our primary database is PostgreSQL 16."
CORRECTED = "Heads up: billing now runs on CockroachDB 24 for everything."
QUESTION = "which database should the new ledger service use?"
NAMED = "Is Postgres still right for the new ledger service?"
_DIRECTIVE = re.compile(r"\| Why it matters: (.*?) \(stored ")
_RULED_OUT = re.compile(r"\[ruled out: ([^\]]*)\]")


def said(words: str) -> Callable[[Recorded], bool]:
    def match(rec: Recorded) -> bool:
        return words in user_words(rec)

    return match


def stated(name: str, content: str, why: str, aliases: list[str]) -> dict[str, Any]:
    """A new belief as the extraction model proposes one for a plain statement."""
    return {
        "type": "decision",
        "canonical_name": name,
        "content": content,
        "why_it_matters": why,
        "aliases": aliases,
        "rejected_alternatives": [],
        "confidence": 0.9,
    }


def stated_reply() -> Any:
    belief = stated(
        "primary_database",
        "The team's primary database is PostgreSQL 16.",
        "Design schemas and queries for PostgreSQL 16.",
        ["postgresql", "postgres", "pg"],
    )
    return extraction({"new_beliefs": [belief]}, said("PostgreSQL 16"))


def corrected_replies(old_id: str) -> list[Any]:
    """Unshown, the old belief gets a new one beside it; shown, a superseding update."""
    words = said("CockroachDB 24 for everything")
    beside = stated(
        "billing_database",
        "Billing and everything else runs on CockroachDB 24.",
        "Use CockroachDB 24 for every service's data.",
        ["cockroachdb", "cockroach", "crdb"],
    )
    update = {
        "belief_id": old_id,
        "canonical_name": "primary_database",
        "change": "superseded",
        "new_content": "The team's primary database is CockroachDB 24, for billing and everything.",
        "why_it_matters": "Design schemas and queries for CockroachDB 24.",
        "rejected_alternatives": ["PostgreSQL 16"],
        "reason": "The user said billing now runs on CockroachDB 24 for everything.",
    }
    return [
        extraction({"belief_updates": [update]}, lambda r: words(r) and old_id in r.body.decode()),
        extraction({"new_beliefs": [beside]}, lambda r: words(r) and old_id not in r.body.decode()),
    ]


def judge_lines(blocks: list[str]) -> tuple[bool, str]:
    """Some line's directive names CockroachDB with PostgreSQL ruled out; none says
    "PostgreSQL 16"."""
    lines = [line for b in blocks for line in b.splitlines() if line.startswith("- [")]
    good = bad = False
    for line in lines:
        directive = _DIRECTIVE.search(line)
        ruled = _RULED_OUT.search(line)
        text = directive.group(1) if directive else ""
        bad = bad or "PostgreSQL 16" in text
        if "CockroachDB" in text and ruled and "postgres" in ruled.group(1).casefold():
            good = True
    shown = [line[:240] for line in lines if "atabase" in line or "ockroach" in line]
    return good and not bad, f"lines={shown}"


def check_correction(
    client: str, run: Run, upstream: ModelStandIn, gateway: Gateway
) -> list[Verdict]:
    upstream.queue(stated_reply())
    run(STATED)
    old = gateway.wait_for_belief("primary_database")
    if old is None:
        return [Verdict(client, "correction", False, "session 1 made no primary_database belief")]
    upstream.queue(*corrected_replies(old["id"]))
    run(CORRECTED)
    gateway.settled_jobs("CockroachDB 24")
    live = [
        f"{b['canonical_name']}: {b['content']!r} why={b.get('why_it_matters')!r} "
        f"rejected={b.get('rejected_alternatives')}"
        for b in gateway.beliefs()
        if "database" in b["canonical_name"] and b.get("epistemic_status") != "superseded"
    ]
    verdicts = []
    for scenario, question in (("correction", QUESTION), ("correction-named", NAMED)):
        middle = len(upstream.requests)
        run(question)
        gateway.settled_jobs(question)
        asked = [r for r in upstream.requests[middle:] if is_agent_call(r)]
        passed, lines = judge_lines([b for r in asked for b in relevant_blocks(r)])
        detail = f"requests={len(asked)} delivered {lines}; store={live}"
        verdicts.append(Verdict(client, scenario, passed and bool(asked), detail))
    return verdicts


# -- the subagent -------------------------------------------------------------------------------

SUBAGENT_PROMPT = (
    "Context from the user: the team manages infrastructure with pulumi. "
    "List the files in the project and report back."
)


def check_subagent(run: Run, upstream: ModelStandIn, gateway: Gateway, record: Record) -> Verdict:
    typed = "Survey this project for me with a subagent."
    pulumi = stated(
        "infrastructure_tool",
        "Infrastructure is managed with Pulumi.",
        "Write infrastructure changes as Pulumi programs.",
        ["pulumi"],
    )
    upstream.queue(extraction({"new_beliefs": [pulumi]}, said("pulumi")))
    seen: list[Recorded] = []
    upstream.queue(subagent_reply("The project holds app.py.", seen))
    answered, replies = tool_loop(typed, claude_agent(SUBAGENT_PROMPT), "It holds app.py.")
    upstream.queue(*replies)
    start = len(upstream.requests)
    said_back = run(typed)
    jobs = gateway.settled_jobs(typed)
    record("subagent", [r for r in upstream.requests[start:] if r.body and not is_extraction(r)])
    stored = [b["content"] for b in gateway.beliefs() if "pulumi" in b["content"].casefold()]
    passed = bool(seen) and len(answered) == 2 and not stored
    detail = (
        f"subagent requests={len(seen)} parent loop requests={len(answered)} "
        f"jobs for the typed message={len(jobs)} Pulumi beliefs={stored}"
    )
    if not seen:
        detail += f"; client said: {said_back[-200:]!r}"
    return Verdict("claude-code", "subagent", passed, detail)
