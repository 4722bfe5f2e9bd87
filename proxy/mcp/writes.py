"""The memory tools' writes: `remember` is the extractor's merge policy applied to one stated
belief (reinforce, supersede or open a conflict, never a blind insert), and what it writes
carries `source_type = "mcp"`; `forget` rejects, with the reason in history."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from typing import Any

from beliefs.model.models import Belief, dedupe_names, normalize_canonical_name, same_content
from beliefs.store.belief_store import BeliefStore
from beliefs.text.query import STOP_WORDS
from extractor.apply import apply_plan
from extractor.known import known_beliefs
from extractor.merge import clean_names, plan_merge, visible_scopes
from extractor.plan import Plan
from extractor.schema import BeliefUpdate, ExtractionOutput, NewBelief
from extractor.turn import Turn
from proxy.mcp.args import ForgetArgs, RememberArgs
from proxy.mcp.caller import Caller, Outcome, ToolFailure, scopes_of, visible_to
from proxy.mcp.naming import StatementNames, statement_names

SOURCE_TYPE = "mcp"
MODEL = "mcp"  # the "model" an MCP write is attributed to in its provenance
STATED_CONFIDENCE = 0.9
NAME_WORDS = 5


def remember(
    store: BeliefStore,
    caller: Caller,
    args: RememberArgs,
    call_id: str,
    now: datetime,
    confirm_always: bool = False,
) -> Outcome:
    """Plan the stated belief as the extractor plans a turn's, then write it in one go.

    With `confirm_always` (TENURE_ALWAYS_WRITE_CONFIRM) a write that would make a belief
    always-on is refused, and nothing is written: the user pins it themselves."""
    identity = caller.identity
    scopes = list(scopes_of(caller, args.scope))
    old = None
    if args.replaces:
        # Named by id or name wherever it lives unless a scope was given; the replacement
        # lives where the old one did.
        old = _find(store, caller, args.replaces, "replaces", scopes if args.scope else None)
        if not args.scope:
            scopes = list(old.scope)
    turn = Turn(
        request_id=call_id,
        user_id=identity.user_id,
        agent_id=identity.agent_id,
        scopes=scopes,
        model=MODEL,
        user_message=args.statement,
    )
    visible = visible_scopes(turn)
    if old is not None:
        update = BeliefUpdate(
            belief_id=old.id,
            canonical_name=old.canonical_name,
            change="superseded",
            new_content=args.statement,
            new_canonical_name=args.name,
            reason=f"replaced through the memory tools ({caller.actor})",
            # The old directive and the replaced option's names must not carry over.
            why_it_matters=args.why_it_matters or None,
            rejected_alternatives=args.rejected_alternatives,
        )
        output = ExtractionOutput(belief_updates=[update])
    else:
        own = statement_names(args.statement)
        name = args.name or _name_for(store, turn, args.statement, visible, own)
        new = NewBelief(
            type=args.type,
            canonical_name=name,
            content=args.statement,
            why_it_matters=args.why_it_matters,
            # Search matches names, never content: the statement's own words make it findable.
            aliases=dedupe_names([*args.aliases, *own.aliases]),
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
            field = "replaces" if old is not None else "statement"
            raise ToolFailure(field, f"nothing was remembered: {reasons}")
        plan = _as_tool_write(plan, provenance, args)
        if confirm_always:
            _refuse_always_on(plan, args)
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
    stamp: dict[str, Any] = {"source_type": SOURCE_TYPE, "provenance": dict(provenance)}
    if args.pinned:
        stamp["pinned"] = True
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


def _refuse_always_on(plan: Plan, args: RememberArgs) -> None:
    """Refuse a write that would deliver a belief on every turn: the user confirms those.

    Raises:
        ToolFailure: a new or replacing belief would be pinned or delivered always.
    """
    for s in plan.supersessions:
        if s.replacement.always_on:
            raise ToolFailure(
                "pinned" if args.pinned else "replaces",
                f"not remembered: the replacement of {s.old_id} would be delivered on every turn "
                "(pinned), and this memory requires the user to confirm that. Ask the user to "
                f"make the change on the belief's page in the Tenure UI (/beliefs/{s.old_id}), or "
                "to pin the replacement with `tenure beliefs pin ID` after you remember it "
                "without pinned.",
            )
    for b in plan.creates:
        if b.always_on:
            raise ToolFailure(
                "pinned",
                f"not remembered: {b.canonical_name!r} would be delivered on every turn (pinned), "
                "and this memory requires the user to confirm that. Remember it without pinned, "
                "then ask the user to pin it: the Pin button on its page in the Tenure UI "
                "(/beliefs/ID) or `tenure beliefs pin ID`, with the id remember returns.",
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
    if belief is None or belief.user_id != user or not visible_to(belief, caller):
        belief = None
        try:
            name = normalize_canonical_name(ref)
        except ValueError:
            name = ""
        named = [
            b
            for b in store.index.by_name(user, name)
            if b.canonical_name == name and b.is_live and visible_to(b, caller)
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


def _name_for(
    store: BeliefStore, turn: Turn, statement: str, visible: list[str], own: StatementNames
) -> str:
    """The name of a live belief that already says this, else one made of its most telling
    phrases, else of its first words."""
    for belief in store.index.records(turn.user_id):
        in_view = belief.is_live and set(belief.scope) & set(visible)
        if in_view and same_content(belief.content, statement):
            return belief.canonical_name
    if own.canonical_name:
        return own.canonical_name
    words = [w for w in re.findall(r"\w+", statement.lower()) if w not in STOP_WORDS]
    return "_".join(words[:NAME_WORDS]) or "remembered"
