"""The turn write: a lone turn's rows (one bound row per table) land as a batch's do (one
list-of-structs parameter per table), and injection records wait to share a later commit
than the durable job's while the job is on disk before the reply ends."""

from __future__ import annotations

import asyncio
import functools
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from extractor.jobs import JobQueue
from extractor.journal import JobJournal
from extractor.turn import Turn
from proxy.gateway.background import StoreWriter
from proxy.gateway.counters import Counters
from proxy.gateway.injections import SAVE_CHUNK, InjectionRecord, query_injections, save_records

WHEN = datetime(2026, 3, 4, 5, 6, 7, 891234, tzinfo=UTC)
KEY = "sk-" + "a1B2c3D4e5F6g7H8i9J0" * 2  # a secret both paths must redact


def _records(tag: str) -> list[InjectionRecord]:
    return [
        InjectionRecord(
            request_id=f"{tag}-full",
            created_at=WHEN,
            user_id="ana\ud800",  # a lone surrogate: stored as U+FFFD
            agent_id="coder",
            scopes=("domain:code", "project:billing"),
            model="gpt-4o-mini",
            endpoint="/v1/chat/completions",
            query=f"use {KEY} for the ünïcödé billing test 🧾",
            layers={"pinned": ["b-1", "b-2"], "relevant": ["b-3"]},
            persona=True,
            approx_tokens=321,
        ),
        InjectionRecord(
            request_id=f"{tag}-bare",
            created_at=WHEN,
            user_id="bo",
            agent_id=None,
            scopes=(),
            model=None,
            endpoint="/v1/messages",
            query="",
            layers={},
            persona=False,
            approx_tokens=0,
        ),
    ]


def _turns(tag: str) -> list[Turn]:
    return [
        Turn(
            request_id=f"{tag}-full",
            user_id="ana",
            agent_id="coder",
            scopes=["domain:code"],
            model="gpt-4o-mini",
            user_message=f"my key is {KEY}, and I prefer tea \ud800",
            assistant_message="Noted — tea it is.",
            tool_calls=[
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
            injected_ids=["b-1"],
            created_at=WHEN,
            wire="anthropic",
        ),
        Turn(request_id=f"{tag}-bare", user_id="bo", model="m", created_at=WHEN),
    ]


def _injection_rows(store: BeliefStore, tag: str) -> list[tuple[Any, ...]]:
    rows = store.execute(
        "SELECT * EXCLUDE (request_id), request_id FROM injections "
        "WHERE starts_with(request_id, ?) ORDER BY request_id",
        [tag],
    ).fetchall()
    return [(*row[:-1], row[-1].removeprefix(tag)) for row in rows]


def _job_rows(store: BeliefStore, ids: list[str]) -> list[tuple[Any, ...]]:
    """Every column but the id, the request id's tag and the write's own timestamps."""
    rows = store.execute(
        "SELECT * EXCLUDE (id, created_at, updated_at, request_id, turn), "
        "json_extract(turn, '$.request_id') AS turn_request, turn::VARCHAR "
        "FROM jobs WHERE list_contains(?, id) ORDER BY request_id",
        [ids],
    ).fetchall()
    return [(*row[:-2], row[-1].replace(row[-2].strip('"'), "REQ")) for row in rows]


def test_a_lone_record_lands_as_a_batched_one_does(store: BeliefStore) -> None:
    for record in _records("alone"):
        save_records(store, [record])
    save_records(store, _records("batch"))
    alone, batch = _injection_rows(store, "alone"), _injection_rows(store, "batch")
    assert len(alone) == 2 and alone == batch
    stored = query_injections(store, request_id="alone-full")[0]
    assert stored.user_id == "ana\ufffd" and KEY not in stored.query
    assert stored.created_at == WHEN and stored.layers == _records("x")[0].layers


def test_more_records_than_a_statement_holds_all_land_as_written(store: BeliefStore) -> None:
    full, bare = _records("many")
    many = [
        replace(full if n % 2 else bare, request_id=f"many-{n:04d}")
        for n in range(SAVE_CHUNK * 2 + 3)
    ]
    save_records(store, many)
    rows = _injection_rows(store, "many-")
    assert [row[-1] for row in rows] == [f"{n:04d}" for n in range(len(many))]
    assert rows[0][:-1] == _injection_rows(store, "many-0000")[0][:-1]
    for record in many[-2:]:  # a full one and a bare one of the last statement
        stored = query_injections(store, request_id=record.request_id)[0]
        assert stored.layers == record.layers and KEY not in stored.query


def test_a_lone_job_lands_as_a_batched_one_does(store: BeliefStore) -> None:
    queue = JobQueue(store)
    woken: list[int] = []
    queue.on_enqueue(lambda: woken.append(1))
    alone = [queue.enqueue_many([turn])[0] for turn in _turns("alone")]
    batch = queue.enqueue_many(_turns("batch"))
    lone_rows, batch_rows = _job_rows(store, alone), _job_rows(store, batch)
    assert len(lone_rows) == 2 and lone_rows == batch_rows
    assert woken == [1, 1, 1]
    job = queue.get(alone[0])
    assert job.status == "pending" and job.created_at == job.updated_at
    assert KEY not in job.turn.user_message and job.turn.user_message.endswith("\ufffd")
    assert job.turn.tool_calls == _turns("x")[0].tool_calls and job.turn.wire == "anthropic"


def _count(store: BeliefStore, table: str) -> int:
    row = store.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(row[0]) if row else 0


def test_records_wait_for_a_later_commit_while_each_job_is_on_disk_at_once(
    store: BeliefStore,
) -> None:
    """Sequential requests: each durable job commits at once without its record; the records
    land together once they are due, or when the writer is flushed or stopped."""
    queue, thread, counters = JobQueue(store), StoreThread(store), Counters()
    records, turns = _records("seq"), _turns("seq")

    async def counts() -> tuple[int, int]:
        jobs = await thread.run(_count, store, "jobs")
        return jobs, await thread.run(_count, store, "injections")

    async def go() -> list[tuple[int, int]]:
        writer = StoreWriter(thread, counters, queue, record_linger_s=0.4)
        writer.start()
        seen = []
        for record, turn in zip(records, turns, strict=True):
            writer.submit_record(record)
            assert await writer.commit_job(functools.partial(lambda t: t, turn))
            seen.append(await counts())
        assert writer.pending == 2 and counters.records_written == 0
        began = time.monotonic()
        while (await counts())[1] < 2:  # due by themselves, without a flush
            assert time.monotonic() - began < 5, "held records were never written"
            await asyncio.sleep(0.02)
        seen.append((counters.jobs_enqueued, counters.records_written))
        writer.submit_record(_records("late")[0])
        await writer.flush()
        seen.append((writer.pending, (await counts())[1]))
        writer.submit_record(_records("last")[0])
        await writer.stop()
        seen.append((writer.pending, (await counts())[1]))
        return seen

    try:
        assert asyncio.run(go()) == [(1, 0), (2, 0), (2, 2), (0, 3), (0, 4)]
    finally:
        thread.close()
    save_records(store, _records("direct"))
    assert _injection_rows(store, "seq") == _injection_rows(store, "direct")


def test_journaled_jobs_share_one_later_commit_and_leave_the_journal_empty(
    store: BeliefStore, tmp_path: Path
) -> None:
    """With a journal, a reply's job is safe once appended: the table takes the jobs of many
    sequential replies in one later commit, after which the journal holds nothing."""
    queue, thread, counters = JobQueue(store), StoreThread(store), Counters()
    journal = JobJournal(tmp_path / "journal")
    turns = [*_turns("j1"), *_turns("j2"), *_turns("j3")]

    async def go() -> tuple[list[int], int, int]:
        writer = StoreWriter(thread, counters, queue, record_linger_s=0.3, journal=journal)
        writer.start()
        in_table = []
        for turn in turns:
            assert await writer.commit_job(functools.partial(lambda t: t, turn))
            in_table.append(await thread.run(_count, store, "jobs"))
        unfolded = journal.unfolded
        began = time.monotonic()
        while await thread.run(_count, store, "jobs") < len(turns):  # due without a flush
            assert time.monotonic() - began < 5, "journaled jobs never reached the table"
            await asyncio.sleep(0.02)
        await writer.stop()
        return in_table, unfolded, journal.unfolded

    try:
        in_table, unfolded, left = asyncio.run(go())
    finally:
        thread.close()
    assert in_table == [0] * len(turns) and unfolded == len(turns) and left == 0
    assert counters.jobs_enqueued == len(turns)
    assert list((tmp_path / "journal").glob("jobs-*")) == []
    stored = store.execute("SELECT turn FROM jobs").fetchall()
    assert len(stored) == len(turns) and all(KEY not in row[0] for row in stored)


def test_a_journal_that_refuses_hands_the_job_to_the_store(
    store: BeliefStore, tmp_path: Path
) -> None:
    (tmp_path / "journal").write_text("a file where the journal's directory should be")
    queue, thread, counters = JobQueue(store), StoreThread(store), Counters()
    journal = JobJournal(tmp_path / "journal")
    turn = _turns("refused")[0]

    async def go() -> int:
        writer = StoreWriter(thread, counters, queue, journal=journal)
        writer.start()
        assert await writer.commit_job(functools.partial(lambda t: t, turn))
        committed = await thread.run(_count, store, "jobs")  # committed, not held
        await writer.stop()
        return committed

    try:
        assert asyncio.run(go()) == 1
    finally:
        thread.close()
