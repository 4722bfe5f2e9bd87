"""Runs: dry runs plan exactly what a real run does; upkeep; cool-down; the runs table."""

from __future__ import annotations

from datetime import timedelta

from beliefs.model.models import utcnow
from beliefs.store.belief_store import BeliefStore
from compaction.runs import list_runs
from tests.compaction.conftest import belief, compact, review, state
from tests.compaction.test_conservative import two_clusters
from tests.compaction.test_flywheel import CLUSTER_THING, say
from tests.extractor.fake_llm import FakeChatModel


def scripted(first: list[str], k8s: str) -> list[dict[str, object]]:
    return [
        review(
            merges=[
                {
                    "belief_ids": first,
                    "canonical_name": "postgres",
                    "content": "Stores billing data in PostgreSQL.",
                    "why_it_matters": "Write SQL for PostgreSQL.",
                    "reason": "same database",
                }
            ]
        ),
        review(),
        review(aliases=[{"belief_id": k8s, "aliases": ["the cluster thing"], "evidence": "x"}]),
    ]


def test_dry_run_shows_exactly_what_a_real_run_then_does(store: BeliefStore) -> None:
    k8s = store.create(belief("kubernetes", "Deploys on Kubernetes.", aliases=["k8s"])).id
    first, _ = two_clusters(store)
    store.create(belief("old_note", "Temporary.", expires_at=utcnow() - timedelta(hours=1)))
    gone = store.create(belief("scratch", "Scratch."))
    store.soft_delete(gone.id)
    store.execute(
        "UPDATE beliefs SET deleted_at = ? WHERE id = ?", [utcnow() - timedelta(days=2), gone.id]
    )
    say(store, CLUSTER_THING, "Kubernetes evicts pods under memory pressure.")
    before = state(store)

    dry = compact(store, FakeChatModel(_replies(first, k8s)), dry_run=True)
    assert state(store) == before and list_runs(store) == []
    real = compact(store, FakeChatModel(_replies(first, k8s)))
    assert real.changes == dry.changes
    assert {c["action"] for c in real.changes} == {"merge", "alias", "expire", "purge"}
    assert (real.merged, real.aliased, real.expired, real.purged) == (1, 1, 1, 1)
    assert state(store) != before and store.verify() == []
    [run] = list_runs(store)
    assert run.changes == real.changes and run.merged == 1 and run.duration_ms is not None


def _replies(first: list[str], k8s: str) -> list[dict[str, object]]:
    """One reply per cluster the model sees, oldest first: kubernetes (named by the turn),
    postgres + billing_db, react + ui_framework."""
    merge, nothing, alias = scripted(first, k8s)
    return [alias, merge, nothing]


def test_promotion_needs_five_reinforcements_and_48_hours(store: BeliefStore) -> None:
    old = utcnow() - timedelta(hours=49)
    ready = store.create(
        belief(
            "dark_mode",
            "Prefers dark mode.",
            epistemic_status="inferred",
            reinforcement_count=5,
            created_at=old,
        )
    )
    young = store.create(
        belief("vim", "Edits in vim.", epistemic_status="inferred", reinforcement_count=9)
    )
    rare = store.create(
        belief(
            "tea", "Drinks tea.", epistemic_status="inferred", reinforcement_count=2, created_at=old
        )
    )
    report = compact(store)
    assert report.promoted == 1
    assert store.get(ready.id).epistemic_status == "active"
    assert "promoted" in [e.event for e in store.history(ready.id)]
    assert store.get(young.id).epistemic_status == store.get(rare.id).epistemic_status == "inferred"


def test_soft_deleted_rows_are_purged_only_after_the_grace_window(store: BeliefStore) -> None:
    fresh = store.soft_delete(store.create(belief("fresh", "Fresh.")).id)
    stale = store.soft_delete(store.create(belief("stale", "Stale.")).id)
    store.execute(
        "UPDATE beliefs SET deleted_at = ? WHERE id = ?", [utcnow() - timedelta(hours=25), stale.id]
    )
    assert compact(store).purged == 1
    ids = {b.id for b in store.list(include_deleted=True, include_superseded=True)}
    assert fresh.id in ids and stale.id not in ids
    assert store.history(stale.id)[-1].detail == {"hard": True}


def test_a_quiet_scope_is_not_examined_again(store: BeliefStore) -> None:
    two_clusters(store)
    llm = FakeChatModel([review(), review()])
    first = compact(store, llm)
    assert first.examined == 4 and len(llm.calls) == 2
    second = compact(store, llm)
    assert second.examined == 0 and second.skipped_scopes == 1 and len(llm.calls) == 2
    # Something new is said: the scope is looked at again.
    say(store, "postgres is slow")
    llm.push(review())
    assert compact(store, llm).examined == 4
    # Only the cluster the new turn talks about goes back to the model.
    assert len(llm.calls) == 3 and "postgres is slow" in llm.calls[-1]["messages"][-1]["content"]
