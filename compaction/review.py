"""Turning a cluster into plan items: exact duplicates, then the model's review, checked."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import ValidationError

from beliefs.model.models import Belief, normalize_canonical_name
from beliefs.text.query import normalize_name
from compaction.aliases import clean_alias, said_by_user, usable
from compaction.clusters import duplicates
from compaction.merge import merged_belief, operator_edited
from compaction.plan import AliasAddition, AliasOrigin, ClusterPlan, Contradiction, Merge
from compaction.prompts import ClusterReview


def plan_duplicates(plan: ClusterPlan, *, now: datetime) -> None:
    """Merge exact duplicates (same name or same content); operator-edited beliefs stay."""
    for group in duplicates(plan.beliefs):
        kept = [b for b in group if not operator_edited(b)]
        for b in group:
            if b not in kept:
                plan.skipped.append(f"{b.id} is operator-edited and is never merged away")
        if len(kept) < 2:
            continue
        reason = "exact duplicates: same " + ("name" if _same_name(kept) else "content")
        plan.merges.append(
            Merge(
                source_ids=tuple(b.id for b in kept),
                survivor=merged_belief(kept, now=now, reason=reason),
                origin="duplicate",
                reason=reason,
            )
        )


def _same_name(group: Sequence[Belief]) -> bool:
    return len({normalize_name(b.canonical_name) for b in group}) == 1


def apply_review(
    plan: ClusterPlan,
    review: ClusterReview,
    *,
    messages: Sequence[str],
    taken: dict[str, set[str]],
    now: datetime,
) -> None:
    """Add the model's merges, contradictions and aliases that pass every check."""
    by_id = {b.id: b for b in plan.beliefs}
    merged = {i: m.survivor.id for m in plan.merges for i in m.source_ids}
    for n, proposal in enumerate(review.merges):
        label = f"merges[{n}]"
        ids = list(dict.fromkeys(proposal.belief_ids))
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            plan.skipped.append(f"{label}: {', '.join(unknown)} not in this cluster")
            continue
        if any(i in merged for i in ids):
            plan.skipped.append(f"{label}: a belief is already merged in this run")
            continue
        sources = [by_id[i] for i in ids if not operator_edited(by_id[i])]
        for i in ids:
            if by_id[i] not in sources:
                plan.skipped.append(f"{label}: {i} is operator-edited and is never merged away")
        if len(sources) < 2:
            continue
        if len({(s.type, s.agent_id) for s in sources}) > 1:
            plan.skipped.append(f"{label}: the beliefs differ in type or agent")
            continue
        name = proposal.canonical_name.strip()
        holder = _name_holder(name, plan.beliefs, {s.id for s in sources})
        if holder is not None:
            plan.skipped.append(f"{label}: name {name!r} belongs to {holder}")
            continue
        if not proposal.content.strip():
            plan.skipped.append(f"{label}: no merged content")
            continue
        try:
            survivor = merged_belief(
                sources,
                now=now,
                reason=proposal.reason,
                canonical_name=name or None,
                content=proposal.content,
                why_it_matters=proposal.why_it_matters,
            )
        except (ValueError, ValidationError) as exc:
            plan.skipped.append(f"{label}: not a valid belief ({exc.__class__.__name__})")
            continue
        plan.merges.append(
            Merge(tuple(s.id for s in sources), survivor, "model", proposal.reason.strip())
        )
        merged.update({s.id: survivor.id for s in sources})
    for n, flag in enumerate(review.contradictions):
        ids = list(dict.fromkeys(flag.belief_ids))
        if len(ids) != 2 or any(i not in by_id for i in ids):
            plan.skipped.append(f"contradictions[{n}]: needs two ids of this cluster")
        elif any(i in merged for i in ids):
            plan.skipped.append(f"contradictions[{n}]: a belief is merged in this run")
        else:
            older, newer = sorted((by_id[i] for i in ids), key=lambda b: (b.created_at, b.id))
            plan.contradictions.append(Contradiction(older.id, newer.id, flag.reason.strip()))
    for n, named in enumerate(review.aliases):
        target = merged.get(named.belief_id, named.belief_id)
        if named.belief_id not in by_id:
            plan.skipped.append(f"aliases[{n}]: {named.belief_id!r} not in this cluster")
            continue
        fresh = []
        for raw in named.aliases:
            alias = clean_alias(raw)
            if alias is None or not said_by_user(alias, messages) or not usable(alias, taken):
                plan.skipped.append(f"aliases[{n}]: {raw!r} was not used by the user or is taken")
                continue
            fresh.append(alias)
        add_aliases(plan, target, fresh, "model", named.evidence, taken)


def add_aliases(
    plan: ClusterPlan,
    belief_id: str,
    aliases: Sequence[str],
    origin: AliasOrigin,
    evidence: str,
    taken: dict[str, set[str]],
) -> None:
    """Record aliases for a belief, merging with ones already planned; marks them taken."""
    fresh = [a for a in dict.fromkeys(aliases) if usable(a, taken)]
    if not fresh:
        return
    for a in fresh:
        taken.setdefault(normalize_name(a), set()).add(belief_id)
    for i, existing in enumerate(plan.aliases):
        if existing.belief_id == belief_id:
            plan.aliases[i] = AliasAddition(
                belief_id,
                (*existing.aliases, *fresh),
                existing.origin,
                f"{existing.evidence} | {evidence}"[:300],
            )
            return
    plan.aliases.append(AliasAddition(belief_id, tuple(fresh), origin, evidence[:300]))


def _name_holder(name: str, beliefs: Sequence[Belief], sources: set[str]) -> str | None:
    try:
        key = normalize_name(normalize_canonical_name(name))
    except ValueError:
        return None
    for b in beliefs:
        if b.id not in sources and normalize_name(b.canonical_name) == key:
            return b.id
    return None
