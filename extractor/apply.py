"""Land a job: read what it touches, plan the merge, write it and mark the job done, atomically."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from beliefs.model.models import dedupe_names
from beliefs.store.belief_store import BeliefStore
from beliefs.store.conflicts import record_conflict
from extractor.always_on import hold_always_on
from extractor.jobs import Job, JobQueue
from extractor.known import known_beliefs
from extractor.merge import plan_merge, referenced
from extractor.plan import Enrichment, Plan, Reinforcement
from extractor.schema import ExtractionOutput, Skipped

ACTOR = "extractor"


@dataclass
class Applied:
    """What one job wrote: belief ids created or changed, conflicts opened, items skipped."""

    written_ids: list[str] = field(default_factory=list)
    conflict_ids: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def land(
    store: BeliefStore,
    queue: JobQueue,
    job: Job,
    output: ExtractionOutput,
    *,
    model: str,
    now: datetime,
    riders: Sequence[Job] = (),
    confirm_always: bool = False,
) -> Applied:
    """One transaction: the beliefs and the job's `done` commit together or not at all.

    `riders` are older turns answered in the same call: done with the job, with its report.
    With `confirm_always`, no belief is made always-on (`extractor.always_on`)."""
    with store.transaction():
        known = known_beliefs(store, job.turn, output)
        plan = plan_merge(output, job.turn, known, model=model, now=now, job_id=job.id)
        held = hold_always_on(plan, confirm_always)
        applied = apply_plan(store, held.plan, user_id=job.turn.user_id, job_id=job.id, now=now)
        held.record(store, ACTOR)
        queue.complete(job.id, applied.written_ids, applied.skipped)
        for rider in riders:
            queue.complete(rider.id, applied.written_ids, applied.skipped)
    return applied


@dataclass(frozen=True)
class Landing:
    """A job whose model output validated, ready to be written."""

    job: Job
    output: ExtractionOutput
    model: str
    riders: tuple[Job, ...] = ()  # older turns of one conversation answered in the same call
    confirm_always: bool = False  # always-on writes wait for the user (`extractor.always_on`)


def land_many(
    store: BeliefStore, queue: JobQueue, items: Sequence[Landing], *, now: datetime
) -> list[Applied | Exception]:
    """Land several jobs, sharing one commit among those that touch disjoint beliefs.

    Each job is still all-or-nothing. Jobs that name the same beliefs as an earlier one land
    after it, alone, so they see its writes; if the shared transaction fails, every job of it
    is landed alone, and a job that fails alone is returned as its exception.
    """
    results: dict[int, Applied | Exception] = {}
    group, later = _independent(store, items)
    if len(group) > 1:
        try:
            with store.transaction():
                shared = [_land(store, queue, items[i], now) for i in group]
            results.update(zip(group, shared, strict=True))
        except Exception:
            later = sorted([*group, *later])
    else:
        later = sorted([*group, *later])
    for i in later:
        item = items[i]
        try:
            results[i] = _land(store, queue, item, now)
        except Exception as exc:  # reported per job; the caller retries or parks it
            results[i] = exc
    return [results[i] for i in range(len(items))]


def _land(store: BeliefStore, queue: JobQueue, item: Landing, now: datetime) -> Applied:
    return land(
        store,
        queue,
        item.job,
        item.output,
        model=item.model,
        now=now,
        riders=item.riders,
        confirm_always=item.confirm_always,
    )


def _independent(store: BeliefStore, items: Sequence[Landing]) -> tuple[list[int], list[int]]:
    # The index only shows committed rows, so two jobs about the same belief must not share a
    # transaction: the second would plan against a state the first already changed.
    taken: set[tuple[str, str]] = set()
    group: list[int] = []
    later: list[int] = []
    for i, item in enumerate(items):
        keys = _keys(store, item)
        if keys & taken:
            later.append(i)
        else:
            group.append(i)
        taken |= keys
    return group, later


def _keys(store: BeliefStore, item: Landing) -> set[tuple[str, str]]:
    user = item.job.turn.user_id
    ids, names = referenced(item.output)
    ids |= set(item.job.turn.injected_ids)
    for belief_id in ids:
        belief = store.index.get(belief_id)
        if belief is not None:
            names.add(belief.canonical_name)
    return {(user, f"id:{i}") for i in ids} | {(user, f"name:{n}") for n in names}


def apply_plan(
    store: BeliefStore,
    plan: Plan,
    *,
    user_id: str,
    job_id: str | None,
    now: datetime,
    actor: str = ACTOR,
) -> Applied:
    """Write a plan; re-entrant inside the caller's transaction. `actor` names the writer in
    each history event (the extractor, or a memory tool's caller)."""
    applied = Applied(skipped=list(plan.skipped))
    written = applied.written_ids
    with store.transaction():
        for belief in plan.creates:
            store.create(belief, actor=actor, with_history=False)
            written.append(belief.id)
        for r in plan.reinforcements:
            _reinforce(store, r, now=now, actor=actor)
            written.append(r.belief_id)
        for e in plan.enrichments:
            _enrich(store, e, actor=actor)
            written.append(e.belief_id)
        for s in plan.supersessions:
            store.supersede(
                s.old_id, s.replacement, reason=s.reason, actor=actor, with_history=False
            )
            written.append(s.replacement.id)
        for c in plan.conflicts:
            conflict_id = record_conflict(
                store,
                user_id=user_id,
                existing_id=c.existing_id,
                proposed=c.proposed,
                reason=c.reason,
                job_id=job_id,
            )
            if conflict_id is None:
                applied.skipped.append(
                    Skipped(
                        item=f"conflict with {c.existing_id}",
                        reason="the same conflict is already open",
                    )
                )
            else:
                applied.conflict_ids.append(conflict_id)
        for res in plan.resolutions:
            reason = f"settled by {res.resolved_by}" if res.resolved_by else "settled in a turn"
            store.update(
                res.belief_id,
                {"resolved_at": now},
                actor=actor,
                event="resolved",
                reason=reason,
                with_history=False,
            )
            written.append(res.belief_id)
    applied.written_ids = list(dict.fromkeys(written))
    return applied


def _reinforce(store: BeliefStore, r: Reinforcement, *, now: datetime, actor: str) -> None:
    reinforced = store.reinforce(
        r.belief_id, aliases=r.aliases, at=now, actor=actor, with_history=False
    )
    if r.rejected_alternatives:
        old = reinforced.rejected_alternatives
        store.update(
            r.belief_id,
            {"rejected_alternatives": dedupe_names([*old, *r.rejected_alternatives])},
            actor=actor,
            event="enriched",
            with_history=False,
        )
    if r.promote:
        store.update(
            r.belief_id,
            {"epistemic_status": "active"},
            actor=actor,
            event="promoted",
            reason="reinforced 5 times over 48 hours",
            with_history=False,
        )


def _enrich(store: BeliefStore, e: Enrichment, *, actor: str) -> None:
    old_belief = store.get(e.belief_id, with_history=False)
    changes: dict[str, object] = {}
    if e.aliases:
        changes["aliases"] = dedupe_names([*old_belief.aliases, *e.aliases])[:25]
    if e.rejected_alternatives:
        changes["rejected_alternatives"] = dedupe_names(
            [*old_belief.rejected_alternatives, *e.rejected_alternatives]
        )
    if e.content:
        changes["content"] = e.content
    store.update(
        e.belief_id, changes, actor=actor, event="enriched", reason=e.reason, with_history=False
    )
