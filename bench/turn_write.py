"""The turn write: CPU on the store thread per proxied turn (its injection record and its
extraction job), today's statements against the current ones, side by side in one run.

Each turn is what the gateway hands the background writer: an injection record and a captured
OpenAI SSE reply that becomes a job (parsed, redacted and encoded on the store thread). Both
implementations write into the same real DuckDB file in a temp dir through the writer's own
batch function, in batches of 1 (a lone request: the durable commit of `make_durable` flushes
the batch at once) and of 8 (concurrent requests sharing a commit), in interleaved rounds.
CPU is `time.thread_time()` of the writing thread, so other load on the machine counts little.

"before" is the statement shape the write used before: every batch, even of one row, as a
list-of-structs parameter. "after" is the code as it stands.

Then the real `StoreWriter` on its store thread, as the chat path drives it: per turn an
injection record submitted and the job committed with `commit_job` (awaited, as before the last
SSE event), sequential and 8 at a time. "before" there is the previous writer: the previous
statements, and each record in the durable job's commit (`record_linger_s=0`); "after" holds
records for a later, shared commit. CPU is the store thread's own.

Run: `.venv/bin/python bench/turn_write.py [--turns 300] [--rounds 4]`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from beliefs.models import storable, storable_value, utcnow
from beliefs.store import BeliefStore
from beliefs.thread import StoreThread
from extractor import jobs as job_table
from extractor.jobs import JobQueue, new_job_id
from extractor.redact import redact_value
from proxy.gateway import background, injections
from proxy.gateway.background import StoreWriter, _apply, _Item
from proxy.gateway.counters import Counters
from proxy.gateway.injections import InjectionRecord
from proxy.gateway.side_calls import SeenMessages
from proxy.gateway.tables import MIGRATIONS as GATEWAY_TABLES
from proxy.gateway.turns import CapturedTurn

REPLY = (
    "Noted: you prefer tea over coffee in the morning, and the billing service keeps its "
    "invoices in UTC. I will keep both in mind for the migration plan we discussed."
)
Result = list[tuple[_Item, str, bool]]  # the writer's batch result: (item, error, keep)
Batch = Callable[[BeliefStore, JobQueue | None, list[_Item]], Result]


def sse(text: str) -> list[bytes]:
    """An OpenAI chat-completions stream of `text`, one event a word."""
    events = [
        b"data: "
        + json.dumps(
            {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": w}}]}
        ).encode()
        + b"\n\n"
        for w in text.split(" ")
    ]
    return [*events, b"data: [DONE]\n\n"]


def turn_items(n: int, seen: SeenMessages, tag: str) -> list[_Item]:
    """One proxied turn as the writer receives it: its injection record and its job."""
    request_id = f"req-{tag}-{n}"
    now = datetime.now(UTC)
    record = InjectionRecord(
        request_id=request_id,
        created_at=now,
        user_id="bench-user",
        agent_id="coder",
        scopes=("domain:code", "project:billing"),
        model="gpt-4o-mini",
        endpoint="/v1/chat/completions",
        query=f"how should the billing migration handle invoices, step {n}?",
        layers={"pinned": ["b-1", "b-2"], "relevant": [f"b-{n % 97}", "b-7", "b-9"]},
        persona=True,
        approx_tokens=240,
    )
    captured = CapturedTurn(
        request_id=request_id,
        wire="openai",
        user_id="bench-user",
        agent_id="coder",
        scopes=("domain:code", "project:billing"),
        model="gpt-4o-mini",
        user_message=f"I prefer tea over coffee; invoices stay in UTC (turn {n}).",
        chunks=sse(REPLY),
        content_type="text/event-stream",
        content_encoding="",
        injected_ids=["b-1", "b-2", "b-7"],
        created_at=now,
    )
    return [
        _Item("injection", record=record),
        _Item("job", turn=lambda: captured.to_turn(seen), done=None),
    ]


def before(store: BeliefStore, jobs: JobQueue | None, items: list[_Item]) -> Result:
    """The previous write: one transaction, each table's rows as one list-of-structs."""
    with store.transaction():
        records = [item.record for item in items if item.record is not None]
        if records:
            fields = injections._FIELDS
            rows = [dict(zip(fields, r.row(), strict=True)) for r in records]
            store.execute(injections._INSERT, [rows])
        turns = [turn for item in items if (turn := item.job_turn()) is not None]
        if turns:
            now = utcnow()
            chunk = [
                {
                    "id": new_job_id(),
                    "user_id": storable(turn.user_id),
                    "request_id": turn.request_id,
                    "turn": json.dumps(storable_value(redact_value(turn.model_dump(mode="json")))),
                }
                for turn in turns
            ]
            store.execute(job_table._INSERT_PENDING, [now, now, chunk])
    return [(item, "", False) for item in items]


def after(store: BeliefStore, jobs: JobQueue | None, items: list[_Item]) -> Result:
    return _apply(store, jobs, items)


def cpu_per_turn(
    write: Batch, store: BeliefStore, jobs: JobQueue, turns: int, batch: int, tag: str
) -> float:
    """Microseconds of this thread's CPU per turn written in batches of `batch` turns."""
    seen = SeenMessages()
    batches = [
        [item for n in range(start, start + batch) for item in turn_items(n, seen, tag)]
        for start in range(0, turns, batch)
    ]
    began = time.thread_time()
    for items in batches:
        write(store, jobs, items)
    return (time.thread_time() - began) / turns * 1e6


@contextlib.contextmanager
def previous_statements(use: bool) -> Iterator[None]:
    """The writer's batch function swapped for the previous statements while `use`."""
    current = background._apply
    if use:
        background._apply = before
    try:
        yield
    finally:
        background._apply = current


async def writer_cpu_per_turn(
    thread: StoreThread, jobs: JobQueue, turns: int, concurrent: int, old: bool, tag: str
) -> float:
    """Store-thread CPU (µs) per turn written through a real StoreWriter."""
    writer = StoreWriter(thread, Counters(), jobs, record_linger_s=0 if old else 0.25)
    writer.start()
    seen = SeenMessages()

    async def one(n: int) -> None:
        record, job = turn_items(n, seen, tag)
        assert record.record is not None and job.turn is not None
        writer.submit_record(record.record)
        assert await writer.commit_job(job.turn)

    with previous_statements(old):
        began = await thread.run(time.thread_time)
        for start in range(0, turns, concurrent):
            await asyncio.gather(*(one(n) for n in range(start, start + concurrent)))
        await writer.stop()
        spent = await thread.run(time.thread_time) - began
    return spent / turns * 1e6


def writer_rounds(store: BeliefStore, jobs: JobQueue, turns: int, rounds: int) -> None:
    thread = StoreThread(store)
    print(f"\nthe writer, commit_job per turn ({turns} turns, store-thread CPU)")
    print(f"{'at once':>7}  {'before µs/turn':>15}  {'after µs/turn':>14}  {'after/before':>12}")
    try:
        for concurrent in (1, 8):
            got: dict[bool, list[float]] = {True: [], False: []}
            for round_ in range(rounds):
                for old in (True, False) if round_ % 2 == 0 else (False, True):
                    tag = f"w-{old}-{concurrent}-{round_}"
                    got[old].append(
                        asyncio.run(writer_cpu_per_turn(thread, jobs, turns, concurrent, old, tag))
                    )
            was, now = statistics.median(got[True]), statistics.median(got[False])
            print(f"{concurrent:>7}  {was:>15.0f}  {now:>14.0f}  {now / was:>12.2f}")
    finally:
        thread.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300, help="turns per measurement")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved rounds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = BeliefStore.open(Path(tmp) / "bench.duckdb")
        store.ensure_schema(GATEWAY_TABLES)
        jobs = JobQueue(store)
        for write in (before, after):  # warm both statement shapes
            cpu_per_turn(write, store, jobs, 40, 1, f"warm-{write.__name__}")
        print(f"{args.turns} turns per measurement, {args.rounds} interleaved rounds")
        print(f"{'batch':>5}  {'before µs/turn':>15}  {'after µs/turn':>14}  {'after/before':>12}")
        for batch in (1, 8):
            got: dict[str, list[float]] = {"before": [], "after": []}
            for round_ in range(args.rounds):
                order = (before, after) if round_ % 2 == 0 else (after, before)
                for write in order:
                    tag = f"{write.__name__}-{batch}-{round_}"
                    got[write.__name__].append(
                        cpu_per_turn(write, store, jobs, args.turns, batch, tag)
                    )
            old, new = statistics.median(got["before"]), statistics.median(got["after"])
            print(f"{batch:>5}  {old:>15.0f}  {new:>14.0f}  {new / old:>12.2f}")
        writer_rounds(store, jobs, args.turns, args.rounds)
        store.close()


if __name__ == "__main__":
    main()
