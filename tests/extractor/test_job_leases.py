"""Replicas on one PostgreSQL database share the job queue: a job is claimed by one of them,
left to it while its lease lasts, taken over after, and completed once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from beliefs.model.models import utcnow
from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore
from extractor.errors import JobStateError
from extractor.jobs import JobQueue
from extractor.turn import Turn


@pytest.fixture
def two(pg_url: str) -> Iterator[tuple[BeliefStore, BeliefStore]]:
    a, b = open_store(pg_url, replica="a"), open_store(pg_url, replica="b")
    yield a, b
    a.close()
    b.close()


def turn(n: int) -> Turn:
    return Turn(request_id=f"req-{n}", user_id="u", model="m", user_message=f"turn {n}")


def test_claims_are_disjoint_and_a_live_lease_is_respected(
    two: tuple[BeliefStore, BeliefStore],
) -> None:
    a, b = (JobQueue(s, lease_s=60) for s in two)
    ids = a.enqueue_many([turn(n) for n in range(6)])
    mine = a.claim_many(4)
    theirs = b.claim_many(10)  # the rest, never one A holds
    assert {j.id for j in mine} | {j.id for j in theirs} == set(ids)
    assert not {j.id for j in mine} & {j.id for j in theirs}
    assert b.claim_many(10) == []  # A's running jobs are A's while the lease lasts


def test_a_dead_replicas_job_is_taken_over_and_completed_once(
    two: tuple[BeliefStore, BeliefStore],
) -> None:
    sa, sb = two
    a, b = JobQueue(sa, lease_s=60), JobQueue(sb, lease_s=60)
    [job_id] = a.enqueue_many([turn(1)])
    assert a.claim() is not None
    later = utcnow() + timedelta(seconds=61)
    taken = b.claim(later)
    assert taken is not None and taken.id == job_id and taken.attempts == 2
    with sb.transaction():
        b.complete(job_id, [], [])
    # A wakes up and finishes the same attempt: refused, so its writes roll back with it.
    with pytest.raises(JobStateError, match="not running"), sa.transaction():
        a.complete(job_id, [], [])
    assert b.get(job_id).status == "done"


def test_renewing_keeps_every_held_job_and_only_those(
    two: tuple[BeliefStore, BeliefStore],
) -> None:
    sa, sb = two
    a, b = JobQueue(sa, lease_s=60), JobQueue(sb, lease_s=60)
    ids = a.enqueue_many([turn(n) for n in range(3)])
    claimed = utcnow()
    assert sorted(j.id for j in a.claim_many(3)) == sorted(ids)
    a.release(ids[2])  # given back: pending, no longer A's to renew
    assert a.renew_held(claimed + timedelta(seconds=50)) == 2
    # Past the claim's lease but within the renewal's: only the released job is free.
    assert [j.id for j in b.claim_many(10, claimed + timedelta(seconds=61))] == [ids[2]]
    taken = b.claim_many(10, claimed + timedelta(seconds=111))  # the renewal ran out too
    assert sorted(j.id for j in taken) == sorted(ids[:2])
    assert a.renew_held(claimed + timedelta(seconds=112)) == 0  # B holds them now
