"""The turn write: CPU per proxied turn (its injection record and its durable extraction job)
and how long a reply's end waits for it, committed to the store per reply (`TENURE_JOURNAL=0`)
against appended to the job journal, side by side in interleaved rounds.

Each turn is what the chat path hands the background writer: an injection record submitted and
a captured OpenAI SSE reply made durable with `commit_job` (awaited, as before the last SSE
event), sequential and 8 at a time, through the real `StoreWriter` on its store thread, into a
real DuckDB file holding `--beliefs` beliefs. CPU is the whole process's (the store thread, the
journal thread and the event loop), per turn, including the journaled jobs' later commit to
the table; the wait is `commit_job`'s, p50 and p99.

Run: `.venv/bin/python bench/turn_write.py [--turns 300] [--rounds 4] [--beliefs 10000]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from beliefs.opening import open_store
from beliefs.store.thread import StoreThread
from bench.corpus import make_corpus
from extractor.jobs import JobQueue
from extractor.journal import JobJournal
from proxy.gateway.background import StoreWriter
from proxy.gateway.counters import Counters
from proxy.gateway.injections import InjectionRecord
from proxy.gateway.protocols.chat_completions import CHAT_COMPLETIONS
from proxy.gateway.side_calls import SeenMessages
from proxy.gateway.tables import MIGRATIONS as GATEWAY_TABLES
from proxy.gateway.turns import CapturedTurn
from proxy.gateway.write_batches import Item

REPLY = (
    "Noted: you prefer tea over coffee in the morning, and the billing service keeps its "
    "invoices in UTC. I will keep both in mind for the migration plan we discussed."
)


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


def turn_items(n: int, seen: SeenMessages, tag: str) -> list[Item]:
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
        protocol=CHAT_COMPLETIONS,
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
        Item("injection", record=record),
        Item("job", turn=lambda: captured.to_turn(seen), done=None),
    ]


async def writer_per_turn(
    thread: StoreThread,
    jobs: JobQueue,
    journal: Path | None,
    turns: int,
    concurrent: int,
    tag: str,
) -> tuple[float, list[float]]:
    """Process CPU (µs) per turn written through a real StoreWriter, and each reply's wait."""
    writer = StoreWriter(
        thread, Counters(), jobs, journal=JobJournal(journal) if journal is not None else None
    )
    writer.start()
    seen = SeenMessages()
    waits: list[float] = []

    async def one(n: int) -> None:
        record, job = turn_items(n, seen, tag)
        assert record.record is not None and job.turn is not None
        writer.submit_record(record.record)
        began = time.perf_counter()
        assert await writer.commit_job(job.turn)
        waits.append(time.perf_counter() - began)

    began = time.process_time()
    for start in range(0, turns, concurrent):
        await asyncio.gather(*(one(n) for n in range(start, start + concurrent)))
    await writer.stop()  # the journaled jobs' commit to the table counts too
    return (time.process_time() - began) / turns * 1e6, waits


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300, help="turns per measurement")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved rounds")
    parser.add_argument("--beliefs", type=int, default=10_000, help="beliefs in the store")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "bench.duckdb")
        store.import_beliefs(make_corpus(args.beliefs))
        store.ensure_schema(GATEWAY_TABLES)
        jobs = JobQueue(store)
        thread = StoreThread(store)
        ways = {"store commit": None, "journal": Path(tmp) / "journal"}
        print(f"{args.turns} turns per measurement, {args.rounds} interleaved rounds, ", end="")
        print(f"{args.beliefs} beliefs in the store")
        print(
            f"{'at once':>7}  {'way':<13} {'CPU µs/turn':>12} {'wait p50 ms':>12} "
            f"{'wait p99 ms':>12}  {'CPU ratio':>9}"
        )
        try:
            asyncio.run(writer_per_turn(thread, jobs, ways["journal"], 40, 1, "warm"))
            for concurrent in (1, 8):
                cpu: dict[str, list[float]] = {way: [] for way in ways}
                waits: dict[str, list[float]] = {way: [] for way in ways}
                for round_ in range(args.rounds):
                    order = list(ways) if round_ % 2 == 0 else list(reversed(ways))
                    for way in order:
                        tag = f"{way}-{concurrent}-{round_}"
                        spent, waited = asyncio.run(
                            writer_per_turn(thread, jobs, ways[way], args.turns, concurrent, tag)
                        )
                        cpu[way].append(spent)
                        waits[way].extend(waited)
                base = statistics.median(cpu["store commit"])
                for way in ways:
                    median = statistics.median(cpu[way])
                    print(
                        f"{concurrent:>7}  {way:<13} {median:>12.0f} "
                        f"{percentile(waits[way], 50) * 1000:>12.2f} "
                        f"{percentile(waits[way], 99) * 1000:>12.2f}  {median / base:>9.2f}"
                    )
        finally:
            thread.close()
            store.close()


if __name__ == "__main__":
    main()
