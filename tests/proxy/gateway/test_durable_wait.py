"""The wait a reply's end makes for its turn's commit: the commit's answer, or False once the
wait is over; neither a time-out nor a cancelled wait takes the write back (it stays queued and
is written when the store takes it). A real store and journal; the store's thread is held
busy to make a commit late."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from extractor.jobs import JobQueue
from extractor.journal import JobJournal
from proxy.gateway.background import StoreWriter
from proxy.gateway.capture import committed_within
from proxy.gateway.counters import Counters
from tests.extractor.test_journal_group import tagged_turn


def _jobs(store: BeliefStore) -> int:
    row = store.execute("SELECT count(*) FROM jobs").fetchone()
    return int(row[0]) if row else 0


def test_a_journaled_commit_answers_true(store: BeliefStore, tmp_path: Path) -> None:
    thread, counters = StoreThread(store), Counters()
    journal = JobJournal(tmp_path / "journal")

    async def go() -> tuple[bool, bool, int]:
        writer = StoreWriter(thread, counters, JobQueue(store), journal=journal)
        writer.start()
        answered = await committed_within(writer, lambda: tagged_turn("j1"), 5.0)
        nothing = await committed_within(writer, lambda: None, 5.0)  # no job: at once
        assert await writer.commit_job(lambda: tagged_turn("j2"))
        assert not writer.ends_due  # each reply that waited went on: none is due
        appended = journal.unfolded
        await writer.stop()
        return answered, nothing, appended

    try:
        answered, nothing, appended = asyncio.run(go())
    finally:
        thread.close()
    assert answered and nothing and appended == 2
    assert _jobs(store) == 2  # folded into the table by the writer's stop


def test_a_late_or_abandoned_commit_is_written_all_the_same(store: BeliefStore) -> None:
    """Without a journal the job waits for the store's thread; held busy, the wait times out
    (False), and a cancelled wait raises; both jobs are in the table once the thread is free."""
    thread, counters = StoreThread(store), Counters()
    free = threading.Event()

    async def go() -> bool:
        writer = StoreWriter(thread, counters, JobQueue(store), linger_s=0.0)
        writer.start()
        busy = thread.submit(lambda: free.wait(10))
        late = await committed_within(writer, lambda: tagged_turn("late"), 0.05)
        waiting = asyncio.ensure_future(committed_within(writer, lambda: tagged_turn("gone"), 5.0))
        await asyncio.sleep(0)  # the wait has begun: its job is queued
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        free.set()
        await asyncio.wrap_future(busy)
        await writer.flush()
        await writer.stop()
        return late

    try:
        late = asyncio.run(go())
    finally:
        thread.close()
    assert late is False
    assert _jobs(store) == 2


def test_a_due_reply_end_goes_before_a_search(store: BeliefStore, tmp_path: Path) -> None:
    """Once a reply's job is appended, work that asks `ends_first` (a search) starts only
    after that reply went on; work that does not ask runs in queue order, before it."""
    thread, counters = StoreThread(store), Counters()
    journal = JobJournal(tmp_path / "journal")

    async def go() -> list[str]:
        writer = StoreWriter(thread, counters, JobQueue(store), journal=journal)
        writer.start()
        order: list[str] = []

        async def reply() -> None:
            assert await committed_within(writer, lambda: tagged_turn("r1"), 10.0)
            order.append("reply")

        async def search() -> None:
            await writer.ends_first()
            order.append("search")

        async def plain() -> None:
            order.append("plain")

        ending = asyncio.ensure_future(reply())
        await asyncio.sleep(0)  # the reply waits: its job is with the journal thread
        deadline = time.monotonic() + 10
        while not writer.ends_due:  # the loop held, as a search holds it, until the append
            assert time.monotonic() < deadline, "the journal never appended the job"
            time.sleep(0.001)
        await asyncio.gather(
            ending, asyncio.ensure_future(plain()), asyncio.ensure_future(search())
        )
        assert not writer.ends_due
        await writer.stop()
        return order

    try:
        order = asyncio.run(go())
    finally:
        thread.close()
    assert order == ["plain", "reply", "search"]
