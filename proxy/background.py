"""The background writer: store writes of the request path (injection records, extraction
jobs, chat state) queued without waiting and applied in batches on the store thread."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

from beliefs.store import BeliefStore
from beliefs.thread import StoreThread
from extractor.jobs import JobQueue
from extractor.turn import Turn
from proxy.counters import Counters
from proxy.injections import InjectionRecord, save_records

log = logging.getLogger("tenure.proxy")

Write = Callable[[BeliefStore], object]

LINGER_S = 0.02  # how long a write waits for others to share its commit


@dataclass(frozen=True, slots=True)
class _Item:
    label: str
    write: Write | None = None
    record: InjectionRecord | None = None
    turn: Callable[[], Turn | None] | None = None  # builds an extraction job's turn


class StoreWriter:
    """One task drains the queue; `stop()` writes everything still queued before returning."""

    def __init__(
        self,
        thread: StoreThread,
        counters: Counters,
        jobs: JobQueue | None = None,
        *,
        linger_s: float = LINGER_S,
    ) -> None:
        self._linger = linger_s
        self._thread = thread
        self._counters = counters
        self._jobs = jobs
        self._queue: asyncio.Queue[_Item | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    def start(self) -> None:
        self._task = asyncio.create_task(self._drain(), name="tenure-store-writer")

    def submit(self, label: str, write: Write) -> None:
        """Queue `write(store)`; never blocks the caller."""
        self._queue.put_nowait(_Item(label, write))

    def submit_record(self, record: InjectionRecord) -> None:
        """Queue an injection record; the records of a batch go in one statement."""
        self._queue.put_nowait(_Item("injection", record=record))

    def submit_job(self, turn: Callable[[], Turn | None]) -> None:
        """Queue an extraction job; `turn()` runs on the store thread (parsing the captured
        exchange off the request path) and the jobs of a batch go in one INSERT."""
        self._queue.put_nowait(_Item("job", turn=turn))

    async def flush(self) -> None:
        """Wait until everything submitted so far is written (tests and shutdown)."""
        await self._queue.join()

    async def stop(self) -> None:
        if self._task is None:
            return
        self._queue.put_nowait(None)
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def _drain(self) -> None:
        while True:
            first = await self._queue.get()
            if first is not None and self._linger:
                # Let the writes of a few more requests join this commit: a DuckDB commit costs
                # about a millisecond of CPU, which sequential requests would otherwise pay each.
                await asyncio.sleep(self._linger)
            batch: list[_Item | None] = [first]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            items = [item for item in batch if item is not None]
            try:
                if items:
                    results = await self._thread.run(_apply, self._thread.store, self._jobs, items)
                    for label, ok in results:
                        if ok and label == "injection":
                            self._counters.records_written += 1
                        elif ok and label == "job":
                            self._counters.jobs_enqueued += 1
                        elif not ok:
                            self._counters.write_failures += 1
            finally:
                for _ in batch:
                    self._queue.task_done()
            if any(item is None for item in batch):
                return


def _apply(store: BeliefStore, jobs: JobQueue | None, items: list[_Item]) -> list[tuple[str, bool]]:
    """All items in one transaction; if that fails, each on its own so one bad write costs
    only itself."""
    try:
        with store.transaction():
            _write(store, jobs, items)
        return [(item.label, True) for item in items]
    except Exception:
        if len(items) == 1:
            log.exception("background %s write failed", items[0].label)
            return [(items[0].label, False)]
    results = []
    for item in items:
        try:
            with store.transaction():
                _write(store, jobs, [item])
            results.append((item.label, True))
        except Exception:
            log.exception("background %s write failed", item.label)
            results.append((item.label, False))
    return results


def _write(store: BeliefStore, jobs: JobQueue | None, items: list[_Item]) -> None:
    save_records(store, [item.record for item in items if item.record is not None])
    turns = [turn for item in items if item.turn is not None and (turn := item.turn()) is not None]
    if turns:
        if jobs is None:
            raise RuntimeError("an extraction job was queued but the writer has no job queue")
        jobs.enqueue_many(turns)
    for item in items:
        if item.write is not None:
            item.write(store)
