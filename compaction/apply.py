"""Writing a plan: one transaction per cluster, one per upkeep item; stale plans change nothing."""

from __future__ import annotations

from beliefs.model.models import union_names, utcnow
from beliefs.store.belief_store import BeliefStore
from beliefs.store.conflicts import record_conflict
from compaction.errors import CompactionError
from compaction.plan import ClusterPlan, Upkeep

ACTOR = "compaction"


class PlanStale(CompactionError):
    """A belief changed between planning and writing; the cluster waits for the next run."""

    status = 409


def apply_cluster(store: BeliefStore, plan: ClusterPlan) -> None:
    """Merges, then conflicts, then aliases, all or nothing.

    Raises:
        PlanStale: a belief the plan touches is no longer as it was read.
    """
    planned = {b.id: b for b in plan.beliefs}
    touched = {i for m in plan.merges for i in m.source_ids}
    touched |= {i for c in plan.contradictions for i in (c.existing_id, c.other_id)}
    touched |= {a.belief_id for a in plan.aliases if a.belief_id in planned}
    with store.transaction():
        for belief_id in sorted(touched):
            current = store.get(belief_id)
            if not current.is_live or current.updated_at != planned[belief_id].updated_at:
                raise PlanStale(f"{belief_id} changed after it was read; left for the next run")
        for merge in plan.merges:
            store.merge(
                merge.source_ids,
                merge.survivor,
                reason=f"compaction ({merge.origin}): {merge.reason}",
                actor=ACTOR,
            )
        for flag in plan.contradictions:
            record_conflict(
                store,
                user_id=plan.user_id,
                existing_id=flag.existing_id,
                new_id=flag.other_id,
                reason=f"compaction: {flag.reason}",
            )
        for addition in plan.aliases:
            current = store.get(addition.belief_id)
            aliases = union_names(current.aliases, addition.aliases)
            if aliases != current.aliases:
                store.update(
                    addition.belief_id,
                    {"aliases": aliases},
                    actor=ACTOR,
                    event="enriched",
                    reason=f"alias flywheel ({addition.origin}): {addition.evidence}",
                )


def apply_upkeep(store: BeliefStore, item: Upkeep) -> bool:
    """Promote, expire or purge one belief if it is still in the state that called for it."""
    with store.transaction():
        belief = store.get(item.belief_id)
        if item.action == "promote":
            if not belief.is_live or belief.epistemic_status != "inferred":
                return False
            store.update(
                belief.id,
                {"epistemic_status": "active"},
                actor=ACTOR,
                event="promoted",
                reason=item.reason,
            )
        elif item.action == "expire":
            if not belief.is_live:
                return False
            store.update(
                belief.id,
                {
                    "epistemic_status": "superseded",
                    "invalidated_at": utcnow(),
                    "invalidation_reason": "expired",
                },
                actor=ACTOR,
                event="expired",
                reason=item.reason,
            )
        else:
            if belief.deleted_at is None:
                return False
            store.hard_delete(belief.id, actor=ACTOR)
    return True
