"""Conservative is always correct: contradictions are flagged, bad answers change nothing."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from beliefs.context.assembly import ContextRequest, assemble
from beliefs.model.models import utcnow
from beliefs.store.belief_store import BeliefStore
from beliefs.store.conflicts import list_conflicts
from compaction.runs import list_runs
from tests.compaction.conftest import USER, belief, compact, review, state
from tests.extractor.fake_llm import FakeChatModel


def two_clusters(store: BeliefStore) -> tuple[list[str], list[str]]:
    a = store.create(belief("postgres", "Stores billing data in PostgreSQL.", aliases=["pg"]))
    b = store.create(belief("billing_db", "Billing data lives in Postgres.", aliases=["postgres"]))
    c = store.create(belief("react", "Builds the UI with React.", aliases=["frontend"]))
    d = store.create(belief("ui_framework", "The UI is React.", aliases=["react"]))
    return [a.id, b.id], [c.id, d.id]


def merge_of(ids: list[str], name: str) -> dict[str, object]:
    return {
        "belief_ids": ids,
        "canonical_name": name,
        "content": f"Merged {name}.",
        "why_it_matters": f"Use {name}.",
        "reason": "same thing",
    }


def test_a_contradiction_becomes_a_conflict_and_both_stay_live(store: BeliefStore) -> None:
    a = store.create(belief("test_runner", "Runs tests with pytest.", aliases=["tests"]))
    b = store.create(belief("unit_tests", "Runs tests with unittest only.", aliases=["tests"]))
    llm = FakeChatModel(
        [review(contradictions=[{"belief_ids": [b.id, a.id], "reason": "two test runners"}])]
    )
    report = compact(store, llm)
    assert report.flagged == 1 and report.errors == []
    [conflict] = list_conflicts(store, user_id=USER)
    assert (conflict.existing_id, conflict.new_id, conflict.status) == (a.id, b.id, "open")
    assert "two test runners" in conflict.reason
    assert {x.id for x in store.list(user_id=USER)} == {a.id, b.id}
    # Examined again (forced), the same pair is not flagged twice.
    llm.push(review(contradictions=[{"belief_ids": [a.id, b.id], "reason": "again"}]))
    assert compact(store, llm, force=True).flagged == 0
    assert len(list_conflicts(store, user_id=USER)) == 1


@pytest.mark.parametrize(
    "garbage", ["", "I think these are fine!", '{"merges": [{"belief_ids": 3}]}', "[]"]
)
def test_a_garbage_answer_changes_nothing(store: BeliefStore, garbage: str) -> None:
    first, _ = two_clusters(store)
    llm = FakeChatModel([garbage, garbage, "null", "null"])
    before = state(store)
    report = compact(store, llm, user_id=USER)
    assert state(store) == before
    assert list_conflicts(store) == []
    assert report.merged == report.flagged == report.aliased == 0
    assert any(first[0] in e and "invalid output twice" in e for e in report.errors)
    assert store.verify() == []


def test_a_failure_between_clusters_keeps_the_first_and_leaves_the_second(
    store: BeliefStore,
) -> None:
    first, second = two_clusters(store)
    llm = FakeChatModel([review(merges=[merge_of(first, "postgres")]), RuntimeError("boom")])
    report = compact(store, llm)
    assert report.merged == 1 and any("boom" in e for e in report.errors)
    live = {b.id for b in store.list(user_id=USER)}
    assert not live & set(first) and set(second) <= live
    assert store.verify() == []
    [run] = list_runs(store)
    assert run.status == "done" and run.merged == 1 and run.errors == report.errors


class CancelledOnSecondCall(FakeChatModel):
    async def complete(self, *args: Any, **kwargs: Any) -> str:
        if self.calls:
            raise asyncio.CancelledError
        return await super().complete(*args, **kwargs)


def test_a_cancelled_run_is_recorded_and_leaves_the_store_clean(store: BeliefStore) -> None:
    first, second = two_clusters(store)
    llm = CancelledOnSecondCall([review(merges=[merge_of(first, "postgres")])])
    with pytest.raises(asyncio.CancelledError):
        compact(store, llm)
    assert store.verify() == []
    assert set(second) <= {b.id for b in store.list(user_id=USER)}
    [run] = list_runs(store)
    assert run.status == "interrupted" and run.merged == 1


def test_an_expired_belief_stops_being_injected_and_frees_its_name(store: BeliefStore) -> None:
    now = utcnow()
    gone = store.create(
        belief(
            "sprint_goal",
            "This sprint ships the invoice export.",
            expires_at=now - timedelta(minutes=1),
        )
    )
    kept = store.create(belief("sprint_length", "Sprints last two weeks."))
    request = ContextRequest(USER, ("domain:code",), "what is the sprint goal and sprint length")
    before = assemble(store.index, request, now=now - timedelta(hours=1))
    assert gone.id in {h.belief.id for h in before.relevant}
    report = compact(store)
    assert report.expired == 1
    row = store.get(gone.id)
    assert row.invalidation_reason == "expired" and row.invalidated_at is not None
    assert not row.is_live and "expired" in [e.event for e in row.change_log]
    # No longer injected, not even when asked as of a moment before it expired.
    after = assemble(store.index, request, now=now - timedelta(hours=1))
    assert [h.belief.id for h in after.relevant] == [kept.id]
    store.create(belief("sprint_goal", "This sprint ships the tax report."))
    assert store.verify() == []
