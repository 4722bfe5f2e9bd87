"""Land a job: read what it touches, plan the merge, write it and mark the job done, atomically."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from beliefs.models import dedupe_names
from beliefs.store import BeliefStore
from extractor.conflicts import ConflictBook
from extractor.jobs import Job, JobQueue
from extractor.known import known_beliefs
from extractor.merge import plan_merge
from extractor.plan import Plan
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
) -> Applied:
    """One transaction: the beliefs and the job's `done` commit together or not at all."""
    with store.transaction():
        known = known_beliefs(store, job.turn, output)
        plan = plan_merge(output, job.turn, known, model=model, now=now, job_id=job.id)
        applied = apply_plan(store, plan, user_id=job.turn.user_id, job_id=job.id, now=now)
        queue.complete(job.id, applied.written_ids, applied.skipped)
    return applied


def apply_plan(
    store: BeliefStore, plan: Plan, *, user_id: str, job_id: str | None, now: datetime
) -> Applied:
    """Write a plan; re-entrant inside the caller's transaction."""
    applied = Applied(skipped=list(plan.skipped))
    written = applied.written_ids
    with store.transaction():
        for belief in plan.creates:
            store.create(belief, actor=ACTOR)
            written.append(belief.id)
        for r in plan.reinforcements:
            store.reinforce(r.belief_id, aliases=r.aliases, at=now, actor=ACTOR)
            if r.rejected_alternatives:
                old = store.get(r.belief_id).rejected_alternatives
                store.update(
                    r.belief_id,
                    {"rejected_alternatives": dedupe_names([*old, *r.rejected_alternatives])},
                    actor=ACTOR,
                    event="enriched",
                )
            if r.promote:
                store.update(
                    r.belief_id,
                    {"epistemic_status": "active"},
                    actor=ACTOR,
                    event="promoted",
                    reason="reinforced 5 times over 48 hours",
                )
            written.append(r.belief_id)
        for e in plan.enrichments:
            old_belief = store.get(e.belief_id)
            changes: dict[str, object] = {}
            if e.aliases:
                changes["aliases"] = dedupe_names([*old_belief.aliases, *e.aliases])[:25]
            if e.rejected_alternatives:
                changes["rejected_alternatives"] = dedupe_names(
                    [*old_belief.rejected_alternatives, *e.rejected_alternatives]
                )
            if e.content:
                changes["content"] = e.content
            store.update(e.belief_id, changes, actor=ACTOR, event="enriched", reason=e.reason)
            written.append(e.belief_id)
        for s in plan.supersessions:
            store.supersede(s.old_id, s.replacement, reason=s.reason, actor=ACTOR)
            written.append(s.replacement.id)
        book = ConflictBook(store)
        for c in plan.conflicts:
            conflict_id = book.record(
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
                res.belief_id, {"resolved_at": now}, actor=ACTOR, event="resolved", reason=reason
            )
            written.append(res.belief_id)
    applied.written_ids = list(dict.fromkeys(written))
    return applied
