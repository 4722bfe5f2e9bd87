"""The journal thread: a reply's job is appended and synced off the event loop, the jobs of
replies that end while a sync runs share the next one, and none waits behind the store's own
writes. A real store and a real journal in a temp dir; the journal's sync is the real one,
held at a gate where a test needs appends to gather behind it."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from pathlib import Path

from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from extractor.jobs import JobQueue
from extractor.journal import JobJournal, decode
from extractor.turn import Turn
from proxy.gateway.background import StoreWriter
from proxy.gateway.counters import Counters
from tests.extractor.test_journal_group import GatedSync, tagged_turn

WAIT_S = 30.0  # a bound for waits that end within milliseconds when the code is right


def _turn(tag: str) -> Callable[[], Turn | None]:
    return functools.partial(lambda t: t, tagged_turn(tag))


def _journaled(directory: Path) -> list[str]:
    lines = b"".join(path.read_bytes() for path in sorted(directory.glob("jobs-*")))
    return [job.request_id for job in map(decode, lines.splitlines()) if job is not None]


def _in_table(store: BeliefStore) -> list[str]:
    return sorted(row[0] for row in store.execute("SELECT request_id FROM jobs").fetchall())


def test_replies_that_end_during_a_sync_share_the_next_and_none_ends_before_its_own(
    store: BeliefStore, tmp_path: Path
) -> None:
    sync = GatedSync()
    journal = JobJournal(tmp_path / "journal", sync=sync)
    thread, counters = StoreThread(store), Counters()
    later = [f"later-{n}" for n in range(5)]

    async def go() -> tuple[list[str], list[str]]:
        # Journaled jobs wait for a table commit far later than this test runs.
        writer = StoreWriter(thread, counters, JobQueue(store), journal=journal, record_linger_s=60)
        writer.start()
        first = writer.commit_job_soon(_turn("first"))
        assert await asyncio.to_thread(sync.entered.wait, WAIT_S)  # its sync is under way
        others = [writer.commit_job_soon(_turn(tag)) for tag in later]
        # The loop runs on while the sync is held, and no reply ends before its job is synced.
        ended, _ = await asyncio.wait([first, *others], timeout=0.05)
        assert not ended
        assert writer.pending == 1 + len(later)
        sync.release.set()
        assert await asyncio.wait_for(asyncio.gather(first, *others), WAIT_S) == [True] * 6
        on_disk = _journaled(tmp_path / "journal")  # before the table takes them
        await writer.stop()
        return on_disk, [t.name for t in threading.enumerate()]

    try:
        on_disk, threads = asyncio.run(go())
    finally:
        thread.close()
    assert sorted(on_disk) == sorted(["first", *later])
    assert sync.calls == 2  # the first job's sync, then one for all that came meanwhile
    assert _in_table(store) == sorted(["first", *later])  # each once
    assert list((tmp_path / "journal").glob("jobs-*")) == []
    assert "tenure-journal" not in threads  # the thread ends with the writer


def test_a_reply_s_job_is_durable_while_the_store_thread_is_busy(
    store: BeliefStore, tmp_path: Path
) -> None:
    journal = JobJournal(tmp_path / "journal")
    thread, counters = StoreThread(store), Counters()
    hold = threading.Event()

    async def go() -> tuple[list[str], list[str]]:
        writer = StoreWriter(thread, counters, JobQueue(store), journal=journal)
        writer.start()
        busy = thread.submit(lambda: hold.wait(WAIT_S))  # a long write of something else
        try:
            assert await asyncio.wait_for(writer.commit_job(_turn("meanwhile")), WAIT_S)
            seen = _journaled(tmp_path / "journal"), _in_table(store)
        finally:
            hold.set()
        assert busy.result(WAIT_S)
        await writer.stop()
        return seen

    try:
        on_disk, in_table = asyncio.run(go())
    finally:
        thread.close()
    assert on_disk == ["meanwhile"] and in_table == []
    assert _in_table(store) == ["meanwhile"]


def test_a_turn_that_makes_no_job_ends_its_reply_at_once_and_leaves_no_backlog(
    store: BeliefStore, tmp_path: Path
) -> None:
    journal = JobJournal(tmp_path / "journal")
    thread, counters = StoreThread(store), Counters()

    async def go() -> tuple[bool, tuple[int, float], int]:
        writer = StoreWriter(thread, counters, JobQueue(store), journal=journal)
        writer.start()
        done = writer.commit_job_soon(lambda: None)  # a tool call's reply: the loop goes on
        answered = done.done() and done.result()
        await writer.flush()
        seen = writer.jobs_waiting(), writer.pending
        await writer.stop()
        return answered, *seen

    try:
        answered, waiting, pending = asyncio.run(go())
    finally:
        thread.close()
    assert answered and waiting == (0, 0.0) and pending == 0
    assert _journaled(tmp_path / "journal") == [] and _in_table(store) == []


def test_a_turn_that_cannot_be_built_is_a_lost_write_not_a_stuck_reply(
    store: BeliefStore, tmp_path: Path
) -> None:
    journal = JobJournal(tmp_path / "journal")
    thread, counters = StoreThread(store), Counters()

    def unreadable() -> Turn | None:
        raise ValueError("a reply no adapter can read")

    async def go() -> tuple[bool, tuple[int, float]]:
        writer = StoreWriter(thread, counters, JobQueue(store), journal=journal)
        writer.start()
        written = await asyncio.wait_for(writer.commit_job(unreadable), WAIT_S)
        waiting = writer.jobs_waiting()
        await writer.stop()
        return written, waiting

    try:
        written, waiting = asyncio.run(go())
    finally:
        thread.close()
    assert written is False and waiting == (0, 0.0)
    assert counters.writes_lost == 1 and counters.jobs_enqueued == 0
    assert _journaled(tmp_path / "journal") == [] and _in_table(store) == []
