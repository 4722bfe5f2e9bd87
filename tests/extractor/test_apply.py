from __future__ import annotations

from typing import Any

from beliefs.model.models import utcnow
from beliefs.store.belief_store import BeliefStore
from extractor.apply import Applied, Landing, land_many
from extractor.jobs import JobQueue
from extractor.schema import ExtractionOutput
from tests.extractor.conftest import make_turn
from tests.extractor.fake_llm import extraction, new_belief, update


def landings(queue: JobQueue, *outputs: dict[str, Any]) -> list[Landing]:
    for n, _ in enumerate(outputs):
        queue.enqueue(make_turn(f"turn {n}"))
    jobs = queue.claim_many(len(outputs))
    return [
        Landing(job, ExtractionOutput.model_validate(out), "m")
        for job, out in zip(jobs, outputs, strict=True)
    ]


def test_jobs_about_the_same_belief_land_in_order_and_see_each_other(
    store: BeliefStore, queue: JobQueue
) -> None:
    items = landings(
        queue,
        extraction(new_beliefs=[new_belief("cache", "Uses Redis.")]),
        extraction(new_beliefs=[new_belief("editor", "Uses Vim.")]),
        # Names the belief the first job creates: must land after it, not beside it.
        extraction(
            belief_updates=[update("superseded", canonical_name="cache", new_content="Valkey.")]
        ),
    )
    results = land_many(store, queue, items, now=utcnow())
    assert all(isinstance(r, Applied) for r in results)
    [cache] = [b for b in store.list(user_id="alice") if b.canonical_name == "cache"]
    assert cache.content == "Valkey." and len(store.chain(cache.id)) == 2
    assert {j.status for j in queue.list()} == {"done"}


def test_a_job_that_cannot_land_does_not_sink_the_others(
    store: BeliefStore, queue: JobQueue
) -> None:
    items = landings(
        queue,
        extraction(new_beliefs=[new_belief("one", "First.")]),
        extraction(new_beliefs=[new_belief("two", "Second.")]),
    )
    # Someone else finishes the second job meanwhile: completing it again must fail.
    queue.complete(items[1].job.id, [], [])
    first, second = land_many(store, queue, items, now=utcnow())
    assert isinstance(first, Applied) and isinstance(second, Exception)
    assert [b.canonical_name for b in store.list(user_id="alice")] == ["one"]


def test_claim_many_takes_the_oldest_due_jobs(queue: JobQueue) -> None:
    ids = [queue.enqueue(make_turn(f"t{n}")) for n in range(5)]
    assert [j.id for j in queue.claim_many(3)] == ids[:3]
    assert [j.id for j in queue.claim_many(10)] == ids[3:]
    assert queue.claim_many(10) == []
