"""Judging Tenure-format retrieval cases (single queries and multi-turn sessions)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from beliefs.context.assembly import DEFAULT_MAX_BELIEFS, ContextRequest, assemble
from beliefs.context.layers import Context
from beliefs.store.belief_store import BeliefStore
from beliefs.store.interchange import parse_tenure

DEFAULT_USER = "test-user"


class EvalBackend(Protocol):
    """What the runner needs from a store: context for a turn and the session mutations."""

    def context(
        self, user_id: str, scopes: Sequence[str], query: str, max_beliefs: int
    ) -> Context: ...

    def create(self, raw_belief: Mapping[str, Any]) -> None: ...

    def update(self, belief_id: str, change: Mapping[str, Any]) -> None: ...


@dataclass
class CaseResult:
    case_id: str
    passed: bool
    failures: list[str]
    context: Context
    latency_ms: float

    def report(self) -> dict[str, Any]:
        ctx = self.context
        return {
            "case_id": self.case_id,
            "passed": self.passed,
            "failures": self.failures,
            "persona": ctx.persona,
            "pinned": [b.id for b in ctx.pinned],
            "relevant": [h.belief.id for h in ctx.relevant],
            "open_questions": [b.id for b in ctx.open_questions],
            "scores": [
                {
                    "id": h.belief.id,
                    "score": round(h.score, 4),
                    "clauses": [c.as_dict() for c in h.clauses],
                }
                for h in ctx.relevant
            ],
            "latency_ms": round(self.latency_ms, 3),
        }


@dataclass
class _Layers:
    pinned: list[str]
    relevant: list[str]
    questions: list[str]
    persona: str
    failures: list[str] = field(default_factory=list)

    @property
    def surfaced(self) -> set[str]:
        return set(self.pinned) | set(self.relevant)


def judge(expect: Mapping[str, Any], ctx: Context) -> list[str]:
    """Every failed assertion of a case's `expect`, as readable reasons (empty = pass)."""
    layers = _Layers(
        pinned=[b.id for b in ctx.pinned],
        relevant=[h.belief.id for h in ctx.relevant],
        questions=[b.id for b in ctx.open_questions],
        persona=ctx.persona,
    )
    _judge_relevant(expect.get("relevantBeliefs") or {}, layers)
    _judge_membership("pinnedFacts", expect.get("pinnedFacts") or {}, layers.pinned, layers)
    _judge_membership("openQuestions", expect.get("openQuestions") or {}, layers.questions, layers)
    _judge_persona(expect.get("personaPrelude") or {}, layers)
    for bid in (expect.get("noiseCheck") or {}).get("mustNotSurface", []):
        if bid in layers.surfaced:
            layers.failures.append(f"noiseCheck: {bid} surfaced")
    return layers.failures


def _judge_relevant(spec: Mapping[str, Any], layers: _Layers) -> None:
    relevant, fail = layers.relevant, layers.failures.append
    if "shouldOnlyInclude" in spec:
        want = set(spec["shouldOnlyInclude"])
        got = set(relevant)
        if missing := sorted(want - got):
            fail(f"relevant: missing {missing}")
        if extra := sorted(got - want):
            fail(f"relevant: unexpected {extra}")
    for key in ("mustInclude", "shouldInclude"):
        for bid in spec.get(key, []):
            if bid not in layers.surfaced:
                fail(f"relevant.{key}: {bid} not in pinned or relevant")
    for bid in spec.get("mustExclude", []):
        if bid in layers.surfaced:
            fail(f"relevant.mustExclude: {bid} surfaced")
    if "maxCount" in spec and len(relevant) > spec["maxCount"]:
        fail(f"relevant: {len(relevant)} beliefs > maxCount {spec['maxCount']}")
    if "minCount" in spec and len(relevant) < spec["minCount"]:
        fail(f"relevant: {len(relevant)} beliefs < minCount {spec['minCount']}")
    for first, second in spec.get("orderedBefore", []):
        if first not in relevant or second not in relevant:
            fail(f"relevant.orderedBefore: {first} and {second} must both be relevant")
        elif relevant.index(first) > relevant.index(second):
            fail(f"relevant.orderedBefore: {first} ranked after {second}")


def _judge_membership(name: str, spec: Mapping[str, Any], ids: list[str], layers: _Layers) -> None:
    for bid in spec.get("mustInclude", []):
        if bid not in ids:
            layers.failures.append(f"{name}.mustInclude: {bid} missing (got {ids})")
    for bid in spec.get("mustExclude", []):
        if bid in ids:
            layers.failures.append(f"{name}.mustExclude: {bid} present")


def _judge_persona(spec: Mapping[str, Any], layers: _Layers) -> None:
    text, fail = layers.persona, layers.failures.append
    if spec.get("nonEmpty") and not text.strip():
        fail("personaPrelude: empty, expected text")
    if spec.get("isNull") and text.strip():
        fail(f"personaPrelude: expected empty, got {text[:60]!r}")
    for word in spec.get("contains", []):
        if word.lower() not in text.lower():
            fail(f"personaPrelude: does not contain {word!r}")
    for word in spec.get("mustNotContain", []):
        if word.lower() in text.lower():
            fail(f"personaPrelude: contains {word!r}")


def _run_one(backend: EvalBackend, case_id: str, spec: Mapping[str, Any], query: str) -> CaseResult:
    budget = spec.get("budget") or {}
    max_beliefs = int(budget.get("maxBeliefs", DEFAULT_MAX_BELIEFS))
    user = spec.get("userId") or DEFAULT_USER
    started = time.perf_counter()
    ctx = backend.context(user, list(spec.get("scope") or []), query, max_beliefs)
    latency = (time.perf_counter() - started) * 1000
    failures = judge(spec.get("expect") or {}, ctx)
    return CaseResult(case_id, not failures, failures, ctx, latency)


def run_cases(backend: EvalBackend, cases: Sequence[Mapping[str, Any]]) -> list[CaseResult]:
    return [_run_one(backend, str(c["caseId"]), c, str(c.get("query") or "")) for c in cases]


def run_sessions(backend: EvalBackend, sessions: Sequence[Mapping[str, Any]]) -> list[CaseResult]:
    """Turns in order against one store; a turn's writes shape later turns only."""
    results: list[CaseResult] = []
    for session in sessions:
        turns = sorted(session.get("turns") or [], key=lambda t: int(t.get("turnIndex", 0)))
        for turn in turns:
            spec = {**turn, "userId": turn.get("userId") or session.get("userId")}
            case_id = f"{session['caseId']}#{turn.get('turnIndex', 0)}"
            results.append(_run_one(backend, case_id, spec, str(turn.get("userMessage") or "")))
            if created := turn.get("createBeliefAtTurn"):
                backend.create(created)
            if update := turn.get("updateBeliefAtTurn"):
                backend.update(str(update["beliefId"]), update)
    return results


class StoreEvalBackend:
    """Runs cases against a real `BeliefStore` (the CLI gives it a temporary one)."""

    def __init__(self, store: BeliefStore, personas: Mapping[str, str] | None = None) -> None:
        self.store = store
        for user_id, text in (personas or {}).items():
            store.set_persona(user_id, text, source="operator")

    def context(self, user_id: str, scopes: Sequence[str], query: str, max_beliefs: int) -> Context:
        persona = self.store.get_persona(user_id)
        request = ContextRequest(user_id, tuple(scopes), query, max_beliefs=max_beliefs)
        text = persona.text if persona else ""
        return assemble(self.store.index, request, persona=text, rules=self.store.rules)

    def create(self, raw_belief: Mapping[str, Any]) -> None:
        self.store.import_beliefs(parse_tenure(json.dumps([dict(raw_belief)]), source="case"))

    def update(self, belief_id: str, change: Mapping[str, Any]) -> None:
        current = self.store.get(belief_id)
        changes: dict[str, Any] = {}
        if aliases := change.get("addAliases"):
            changes["aliases"] = [*current.aliases, *aliases]
        if "setContent" in change:
            changes["content"] = change["setContent"]
        if "setCanonicalName" in change:
            changes["canonical_name"] = change["setCanonicalName"]
        if changes:
            self.store.update(belief_id, changes, actor="eval", event="enriched")


def load_personas(data: Mapping[str, Any]) -> dict[str, str]:
    """`persona.json`: user -> {"universal": text, "per_scope": {...}}; the prelude is universal."""
    out: dict[str, str] = {}
    for user_id, entry in data.items():
        text = entry.get("universal") if isinstance(entry, Mapping) else entry
        if isinstance(text, str) and text.strip():
            out[str(user_id)] = text
    return out
