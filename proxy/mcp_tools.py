"""What the memory tools do: recall, remember, forget, list; and the persona and pinned set.

Reads come from the store's in-memory index; writes run on the store thread. `remember` is the
extractor's merge policy applied to one stated belief (reinforce, supersede or open a conflict,
never a blind insert); what it writes carries `source_type = "mcp"`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from beliefs.context import in_scopes
from beliefs.models import Belief, dedupe_names, normalize_canonical_name, same_content, utcnow
from beliefs.query import STOP_WORDS
from beliefs.recall import recall, recall_tags
from beliefs.store import BeliefStore
from beliefs.thread import StoreThread
from compaction import PersonaKeeper
from extractor.apply import apply_plan
from extractor.known import known_beliefs
from extractor.merge import clean_names, plan_merge, visible_scopes
from extractor.plan import Plan
from extractor.schema import BeliefUpdate, ExtractionOutput, NewBelief
from extractor.turn import Turn
from proxy.chat_commands import ChatStates
from proxy.delivery import build_context, context_request
from proxy.identity import UNIVERSAL, Identity, parse_scopes
from proxy.mcp_args import (
    BeliefsArgs,
    ForgetArgs,
    OpenQuestionsArgs,
    RecallArgs,
    RememberArgs,
)
from proxy.settings import Settings

log = logging.getLogger("tenure.mcp")

SOURCE_TYPE = "mcp"
MODEL = "mcp"  # the "model" an MCP write is attributed to in its provenance
STATED_CONFIDENCE = 0.9
NAME_WORDS = 5


class ToolFailure(Exception):
    """A call the tool cannot carry out: names the argument and says what to do."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Caller:
    """Who calls a tool, resolved like a gateway request (headers, URL scope, defaults)."""

    identity: Identity
    transport: Literal["http", "stdio"]
    client: str | None = None

    @property
    def actor(self) -> str:
        """The history events' actor: the agent when known, else the user."""
        return f"mcp:{self.identity.agent_id or self.identity.user_id}"


@dataclass
class Outcome:
    """A tool's answer (JSON for the model) and what the audit row keeps of it."""

    result: dict[str, Any]
    summary: str
    belief_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class MemoryTools:
    settings: Settings
    store: BeliefStore
    thread: StoreThread
    persona: PersonaKeeper
    chat_states: ChatStates | None = None

    def caller(
        self, identity: Identity, transport: Literal["http", "stdio"], client: str | None
    ) -> Caller:
        """Add the scopes set with `!scope` and the configured defaults, as the gateway does."""
        state_scopes: Sequence[str] = ()
        if self.chat_states is not None:
            state_scopes = self.chat_states.get(identity.user_id, identity.agent_id).scopes
        scoped = identity.scoped(state_scopes, self.settings.default_scopes)
        return Caller(scoped, transport, client)

    # -- reads ---------------------------------------------------------------------------------

    def recall(self, caller: Caller, args: RecallArgs) -> Outcome:
        scopes = _scopes(caller, args.scope)
        hits = recall(
            self.store.index,
            caller.identity.user_id,
            args.query,
            scopes=(*scopes, UNIVERSAL) if scopes else (),
            agent_id=caller.identity.agent_id,
            limit=args.limit,
            rules=self.store.rules,
        )
        now = utcnow()
        found = [
            {**_view(h.hit.belief, now), "score": round(h.hit.score, 3)}
            for h in hits
            if _visible_to(h.hit.belief, caller)
        ]
        note = "" if found else "nothing remembered matches; try other names or a wider scope"
        return Outcome(
            {"hits": found, **({"note": note} if note else {})},
            f"{len(found)} hit(s)",
            [h["id"] for h in found],
        )

    def beliefs(self, caller: Caller, args: BeliefsArgs) -> Outcome:
        live = self._listed(caller, args.scope)
        live.sort(key=lambda b: (b.updated_at, b.id), reverse=True)
        now = utcnow()
        shown = [_view(b, now) for b in live[: args.limit]]
        return Outcome(
            {"beliefs": shown, "total": len(live)},
            f"{len(shown)} of {len(live)} belief(s)",
            [b["id"] for b in shown],
        )

    def open_questions(self, caller: Caller, args: OpenQuestionsArgs) -> Outcome:
        now = utcnow()
        open_ = [
            _view(b, now)
            for b in self._listed(caller, args.scope)
            if b.type == "open_question" and b.resolved_at is None
        ]
        return Outcome(
            {"open_questions": open_}, f"{len(open_)} open question(s)", [b["id"] for b in open_]
        )

    def persona_text(self, caller: Caller) -> str:
        text, _ = self.persona.persona_for(caller.identity.user_id)
        return text

    def pinned(self, caller: Caller) -> list[dict[str, Any]]:
        """The pinned beliefs a request with this identity receives on every turn."""
        identity = caller.identity
        request = context_request(
            self.settings,
            user_id=identity.user_id,
            scopes=identity.scopes,
            agent_id=identity.agent_id,
            query="",
            model="gpt-4o",
        )
        text, covers = self.persona.persona_for(identity.user_id)
        context = build_context(self.store, request, text, covers)
        now = utcnow()
        return [_view(b, now) for b in context.pinned]

    def _listed(self, caller: Caller, raw_scope: str | None) -> list[Belief]:
        scopes = _scopes(caller, raw_scope)
        allowed = (*scopes, UNIVERSAL) if scopes else ()
        return [
            b
            for b in self.store.index.beliefs(caller.identity.user_id)
            if b.is_live and _visible_to(b, caller) and (not allowed or in_scopes(b, allowed))
        ]

    # -- writes (on the store thread) ----------------------------------------------------------

    async def remember(self, caller: Caller, args: RememberArgs, call_id: str) -> Outcome:
        return await self.thread.run(remember, self.store, caller, args, call_id, utcnow())

    async def forget(self, caller: Caller, args: ForgetArgs, call_id: str) -> Outcome:
        outcome = await self.thread.run(forget, self.store, caller, args, call_id)
        # The next turn must not carry it in a stale persona either: regenerate now (this
        # returns at once when the belief was not one of the persona's inputs).
        try:
            await self.persona.refresh(caller.identity.user_id)
        except Exception:
            log.exception("persona refresh after forgetting %s failed", outcome.belief_ids)
        return outcome


def remember(
    store: BeliefStore, caller: Caller, args: RememberArgs, call_id: str, now: datetime
) -> Outcome:
    """Plan the stated belief as the extractor plans a turn's, then write it in one go."""
    identity = caller.identity
    turn = Turn(
        request_id=call_id,
        user_id=identity.user_id,
        agent_id=identity.agent_id,
        scopes=list(_scopes(caller, args.scope)),
        model=MODEL,
        user_message=args.statement,
    )
    visible = visible_scopes(turn)
    if args.replaces:
        old = _find(store, caller, args.replaces, "replaces", visible)
        update = BeliefUpdate(
            belief_id=old.id,
            canonical_name=old.canonical_name,
            change="superseded",
            new_content=args.statement,
            new_canonical_name=args.name,
            reason=f"replaced through the memory tools ({caller.actor})",
        )
        output = ExtractionOutput(belief_updates=[update])
    else:
        name = args.name or _name_for(store, turn, args.statement, visible)
        new = NewBelief(
            type=args.type,
            canonical_name=name,
            content=args.statement,
            why_it_matters=args.why_it_matters,
            aliases=args.aliases,
            rejected_alternatives=args.rejected_alternatives,
            scope=[args.scope.strip().lower()] if args.scope else [],
            confidence=STATED_CONFIDENCE,
        )
        output = ExtractionOutput(new_beliefs=[new])
    provenance = {
        "via": "mcp",
        "call_id": call_id,
        "transport": caller.transport,
        "remembered_at": now.isoformat(),
        **({"agent_id": identity.agent_id} if identity.agent_id else {}),
        **({"client": caller.client} if caller.client else {}),
    }
    with store.transaction():
        known = known_beliefs(store, turn, output)
        plan = plan_merge(output, turn, known, model=MODEL, now=now)
        if plan.is_empty():
            reasons = "; ".join(s.reason for s in plan.skipped) or "nothing to write"
            raise ToolFailure("statement", f"nothing was remembered: {reasons}")
        plan = _as_tool_write(plan, provenance, args)
        applied = apply_plan(
            store, plan, user_id=identity.user_id, job_id=None, now=now, actor=caller.actor
        )
    return _remembered(store, plan, applied.conflict_ids)


def forget(store: BeliefStore, caller: Caller, args: ForgetArgs, call_id: str) -> Outcome:
    """Reject the belief: it is never delivered again and stays in history, restorable."""
    ref, field_name = (args.id, "id") if args.id else (args.canonical_name or "", "canonical_name")
    target = _find(store, caller, ref, field_name, visible=None)
    if target.review_state == "rejected":
        return Outcome(
            {
                "id": target.id,
                "action": "already_forgotten",
                "canonical_name": target.canonical_name,
            },
            f"{target.canonical_name} was already rejected",
            [target.id],
        )
    store.update(
        target.id,
        {"review_state": "rejected"},
        actor=caller.actor,
        event="rejected",
        reason=f"{args.reason} (memory tools call {call_id})",
        with_history=False,
    )
    return Outcome(
        {
            "id": target.id,
            "canonical_name": target.canonical_name,
            "action": "forgotten",
            "note": "rejected: no longer injected; kept in history, the user can restore it",
        },
        f"rejected {target.canonical_name}",
        [target.id],
    )


def _as_tool_write(plan: Plan, provenance: dict[str, Any], args: RememberArgs) -> Plan:
    """The plan's new rows as memory-tool writes: their own source type and provenance, and
    what the caller said about a replacement (why it matters, names)."""
    stamp = {"source_type": SOURCE_TYPE, "provenance": dict(provenance)}
    supersessions = []
    for s in plan.supersessions:
        names = clean_names(args.aliases)
        rejected = clean_names(args.rejected_alternatives)
        extra: dict[str, Any] = {
            "aliases": dedupe_names([*s.replacement.aliases, *names])[:25],
            "rejected_alternatives": dedupe_names(
                [*s.replacement.rejected_alternatives, *rejected]
            ),
        }
        if args.why_it_matters:
            extra["why_it_matters"] = args.why_it_matters
        supersessions.append(
            replace(s, replacement=s.replacement.model_copy(update={**stamp, **extra}))
        )
    return replace(
        plan,
        creates=[b.model_copy(update=stamp) for b in plan.creates],
        supersessions=supersessions,
        conflicts=[
            replace(c, proposed=c.proposed.model_copy(update=stamp)) for c in plan.conflicts
        ],
    )


def _remembered(store: BeliefStore, plan: Plan, conflict_ids: list[str]) -> Outcome:
    if plan.creates:
        b = plan.creates[0]
        return Outcome(
            {"action": "created", "id": b.id, "canonical_name": b.canonical_name, **_hint(b)},
            f"created {b.canonical_name}",
            [b.id],
        )
    if plan.reinforcements:
        b = store.get(plan.reinforcements[0].belief_id, with_history=False)
        result = {
            "action": "reinforced",
            "id": b.id,
            "canonical_name": b.canonical_name,
            "reinforcement_count": b.reinforcement_count,
        }
        return Outcome(result, f"reinforced {b.canonical_name}", [b.id])
    if plan.supersessions:
        s = plan.supersessions[0]
        new = s.replacement
        result = {
            "action": "superseded",
            "id": new.id,
            "canonical_name": new.canonical_name,
            "replaced": s.old_id,
        }
        return Outcome(result, f"{new.canonical_name} supersedes {s.old_id}", [new.id, s.old_id])
    c = plan.conflicts[0]
    result = {
        "action": "conflict",
        "conflict_id": conflict_ids[0] if conflict_ids else None,
        "existing_id": c.existing_id,
        "canonical_name": c.proposed.canonical_name,
        "note": f"belief {c.existing_id} under this name says something else; the user "
        "settles it on the review page. To replace it instead, call remember with "
        f"replaces={c.existing_id!r}.",
    }
    return Outcome(result, f"conflict with {c.existing_id}", [c.existing_id])


def _hint(belief: Belief) -> dict[str, str]:
    if belief.aliases:
        return {}
    return {
        "note": "no aliases given: recall finds it only by its name; remember it again "
        "with aliases to make it easier to find"
    }


def _find(
    store: BeliefStore, caller: Caller, ref: str, field_name: str, visible: list[str] | None
) -> Belief:
    """The caller's live belief with id or canonical name `ref` (another user's never)."""
    user = caller.identity.user_id
    belief = store.index.get(ref)
    if belief is None or belief.user_id != user or not _visible_to(belief, caller):
        belief = None
        try:
            name = normalize_canonical_name(ref)
        except ValueError:
            name = ""
        named = [
            b
            for b in store.index.by_name(user, name)
            if b.canonical_name == name and b.is_live and _visible_to(b, caller)
        ]
        in_scope = [b for b in named if visible is None or set(b.scope) & set(visible)]
        belief = next(iter(in_scope or named), None)
    if belief is None or not belief.is_live:
        raise ToolFailure(
            field_name,
            f"{field_name}: no remembered belief with id or name {ref!r}; call recall or "
            "beliefs to see ids and names",
        )
    return belief


def _name_for(store: BeliefStore, turn: Turn, statement: str, visible: list[str]) -> str:
    """The name of a live belief that already says this, else one made of its first words."""
    for belief in store.index.beliefs(turn.user_id):
        in_view = belief.is_live and set(belief.scope) & set(visible)
        if in_view and same_content(belief.content, statement):
            return belief.canonical_name
    words = [w for w in re.findall(r"\w+", statement.lower()) if w not in STOP_WORDS]
    return "_".join(words[:NAME_WORDS]) or "remembered"


def _scopes(caller: Caller, raw: str | None) -> tuple[str, ...]:
    """The tool's `scope` argument when given, else the connection's scopes."""
    if raw:
        return parse_scopes(raw, "scope")
    return tuple(s for s in caller.identity.scopes if s != UNIVERSAL)


def _visible_to(belief: Belief, caller: Caller) -> bool:
    return belief.user_id == caller.identity.user_id and belief.agent_id in (
        None,
        caller.identity.agent_id,
    )


def _view(belief: Belief, now: datetime) -> dict[str, Any]:
    """What a model needs of a belief: names, text, directive, where, and why it is special."""
    out: dict[str, Any] = {
        "id": belief.id,
        "canonical_name": belief.canonical_name,
        "type": belief.type,
        "content": belief.content,
        "why_it_matters": belief.why_it_matters,
        "scope": list(belief.scope),
    }
    if belief.aliases:
        out["aliases"] = list(belief.aliases)
    if belief.rejected_alternatives:
        out["rejected_alternatives"] = list(belief.rejected_alternatives)
    if belief.epistemic_status != "active":
        out["status"] = belief.epistemic_status
    tags = recall_tags(belief, now)
    if tags:
        out["tags"] = list(tags)
    out["source_type"] = belief.source_type
    return out
