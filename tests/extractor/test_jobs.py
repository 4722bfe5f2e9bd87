from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from beliefs.model.models import Belief, utcnow
from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore
from extractor.errors import JobNotFound, JobStateError
from extractor.jobs import JobQueue
from extractor.schema import Skipped
from tests.extractor.conftest import make_turn


def test_enqueue_claim_complete(queue: JobQueue) -> None:
    job_id = queue.enqueue(make_turn())
    assert queue.get(job_id).status == "pending"
    job = queue.claim()
    assert job is not None and job.id == job_id
    assert job.status == "running" and job.attempts == 1
    assert queue.claim() is None
    queue.complete(job_id, ["b-1"], [Skipped(item="x", reason="y")])
    done = queue.get(job_id)
    assert done.status == "done" and done.written_ids == ["b-1"]
    assert done.skipped == [Skipped(item="x", reason="y")] and done.finished_at is not None
    with pytest.raises(JobStateError):
        queue.complete(job_id, [], [])


def test_the_turn_is_stored_redacted(queue: JobQueue, store: BeliefStore) -> None:
    job_id = queue.enqueue(make_turn("deploy with sk-abcdefghijklmnopqrstuvwx now"))
    assert "sk-abcdefghijklmnopqrstuvwx" not in str(store.execute("SELECT * FROM jobs").fetchall())
    assert "[REDACTED]" in queue.get(job_id).turn.user_message


def test_a_job_left_running_by_a_dead_process_is_claimed_again(db_path: Path) -> None:
    store = open_store(db_path)
    first = JobQueue(store)
    job_id = first.enqueue(make_turn())
    assert first.claim() is not None
    assert first.claim() is None  # its own running job is not an orphan
    store.close()  # the process dies here

    store = open_store(db_path)
    try:
        again = JobQueue(store).claim()
        assert again is not None and again.id == job_id and again.attempts == 2
    finally:
        store.close()


def test_failed_attempts_wait_then_park(queue: JobQueue) -> None:
    job_id = queue.enqueue(make_turn())
    queue.claim()
    later = utcnow() + timedelta(seconds=60)
    queue.fail(job_id, "boom", None, later)
    job = queue.get(job_id)
    assert job.status == "pending" and job.last_error == "boom" and job.next_attempt_at == later
    assert queue.claim() is None
    assert queue.claim(now=later) is not None
    queue.fail(job_id, "boom again", "raw text", None)
    job = queue.get(job_id)
    assert job.status == "failed" and job.raw_output == "raw text" and job.attempts == 2
    assert [j.id for j in queue.list(status="failed")] == [job_id]
    assert queue.counts() == {"pending": 0, "running": 0, "done": 0, "failed": 1}


def test_retry_resets_a_failed_job_and_refuses_others(queue: JobQueue) -> None:
    job_id = queue.enqueue(make_turn())
    queue.claim()
    with pytest.raises(JobStateError, match="running"):
        queue.retry(job_id)
    queue.fail(job_id, "boom", None, None)
    job = queue.retry(job_id)
    assert job.status == "pending" and job.attempts == 0 and job.finished_at is None
    with pytest.raises(JobNotFound):
        queue.retry("j-nope")
    with pytest.raises(JobStateError, match="unknown job status"):
        queue.list(status="stuck")


def test_completion_and_writes_share_one_transaction(queue: JobQueue, store: BeliefStore) -> None:
    job_id = queue.enqueue(make_turn())
    queue.claim()
    queue.complete(job_id, [], [])
    belief = Belief(user_id="alice", canonical_name="x", content="y")
    with pytest.raises(JobStateError), store.transaction():
        store.create(belief)
        queue.complete(job_id, [belief.id], [])  # already done: the create rolls back too
    assert store.index.get(belief.id) is None
    assert store.execute("SELECT count(*) FROM beliefs").fetchone() == (0,)


def test_enqueue_many_writes_every_turn_redacted_in_order(
    queue: JobQueue, store: BeliefStore
) -> None:
    woken: list[int] = []
    queue.on_enqueue(lambda: woken.append(1))
    turns = [make_turn(f"turn {i} with key sk-proj-Zx9aQ2mP7rT4wL8kN3vB{i:04d}", request_id=f"r{i}")
             for i in range(450)]  # fmt: skip
    ids = queue.enqueue_many(turns)
    assert len(ids) == len(set(ids)) == 450 and woken == [1]
    rows = store.execute("SELECT id, request_id, turn FROM jobs ORDER BY created_at, id").fetchall()
    by_id = {row[0]: row for row in rows}
    assert [by_id[i][1] for i in ids] == [f"r{i}" for i in range(450)]
    assert all("sk-proj" not in row[2] for row in rows)
    assert queue.enqueue_many([]) == [] and woken == [1]


def test_jobs_completed_in_one_transaction_are_all_done(queue: JobQueue) -> None:
    ids = [queue.enqueue(make_turn(request_id=f"req-{i}")) for i in range(3)]
    assert len(queue.claim_many(3)) == 3
    with queue.store.transaction():
        for i, job_id in enumerate(ids):
            queue.complete(job_id, [f"b-{i}"], [])
        assert queue.get(ids[0]).status == "done"  # reads inside the transaction see it
    assert [queue.get(j).written_ids for j in ids] == [["b-0"], ["b-1"], ["b-2"]]
    assert queue.counts()["done"] == 3


def test_a_job_completed_twice_in_one_transaction_rolls_it_all_back(
    queue: JobQueue, store: BeliefStore
) -> None:
    first, second = (queue.enqueue(make_turn(request_id=f"req-{i}")) for i in range(2))
    queue.claim_many(2)
    belief = Belief(user_id="alice", canonical_name="x", content="y")
    with pytest.raises(JobStateError, match=first), store.transaction():
        store.create(belief)
        queue.complete(first, [belief.id], [])
        queue.complete(second, [], [])
        queue.complete(first, [belief.id], [])
    assert {queue.get(first).status, queue.get(second).status} == {"running"}
    assert store.index.get(belief.id) is None
    assert store.execute("SELECT count(*) FROM beliefs").fetchone() == (0,)


def test_a_job_whose_result_was_rolled_back_is_not_left_running(
    queue: JobQueue, store: BeliefStore
) -> None:
    job_id = queue.enqueue(make_turn())
    job = queue.claim()
    assert job is not None
    with pytest.raises(RuntimeError), store.transaction():
        queue.complete(job_id, ["b-1"], [])
        raise RuntimeError("the write of the result failed")  # e.g. the disk filled up
    assert queue.get(job_id).status == "running"  # the row kept this queue's claim
    # ...but the queue no longer holds it: a retry is accepted, and so is a claim
    assert queue.retry(job_id).status == "pending"
    again = queue.claim()
    assert again is not None and again.id == job_id
    with pytest.raises(JobStateError, match="running"):
        queue.retry(job_id)  # held again: being extracted right now
    with pytest.raises(RuntimeError), store.transaction():
        queue.complete(job_id, [], [])
        raise RuntimeError("failed again")
    third = queue.claim()  # reclaimed directly too, without a retry
    assert third is not None and third.id == job_id


def test_the_backlog_and_its_bound(queue: JobQueue) -> None:
    assert queue.backlog() == (0, 0.0)
    ids = [queue.enqueue(make_turn(f"turn {n}")) for n in range(5)]
    count, age = queue.backlog(utcnow() + timedelta(seconds=30))
    assert count == 5 and age >= 30
    assert queue.shed_over(3) == 2 and queue.shed == 2
    parked = [queue.get(i) for i in ids[:2]]
    assert all(j.status == "failed" and "backlog was full" in (j.last_error or "") for j in parked)
    assert [queue.get(i).status for i in ids[2:]] == ["pending"] * 3  # the newest stay
    assert queue.retry(ids[0]).status == "pending"  # a parked turn is kept, retryable


def test_a_secret_is_masked_in_every_field_of_the_stored_turn(
    queue: JobQueue, store: BeliefStore
) -> None:
    turn = make_turn("db password: Kx9-Hunter-7q", assistant_message="Using Kx9-Hunter-7q.")
    queue.enqueue(turn)
    assert "Kx9-Hunter-7q" not in str(store.execute("SELECT turn FROM jobs").fetchall())


def test_a_failed_jobs_error_and_reply_are_redacted_together(
    queue: JobQueue, store: BeliefStore
) -> None:
    job_id = queue.enqueue(make_turn())
    assert queue.claim() is not None
    raw = '{"content": "db password: Kx9-Hunter-7q"'
    queue.fail(job_id, "unreadable reply near 'Kx9-Hunter-7q'", raw_output=raw)
    assert "Kx9-Hunter-7q" not in str(store.execute("SELECT * FROM jobs").fetchall())
