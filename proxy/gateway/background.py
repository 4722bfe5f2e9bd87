"""The background writer: store writes of the request path (injection records, extraction
jobs, chat state) queued without waiting and applied in batches on the store thread.

A job can also be made durable *now* (`commit_job`): the chat path awaits it before it relays
the end of a reply, so a turn the client received in full is on disk. With a journal (the
default) its row is built on the loop as the reply ends and appended and synced on the journal
thread (`journal_thread.py`), with the jobs of the other replies ending meanwhile, then waits
like an injection record to share a later commit of the table; without one, the write skips
the linger and everything queued meanwhile shares its commit.

Injection records and each turn's kept memory are not part of that promise: they wait (up to
`record_linger_s`, or until `RECORD_BATCH` writes wait) to share a later commit, so a durable
job's commit carries fewer statements and the rows of many requests go in one: a DuckDB commit
costs a few milliseconds of CPU, shared by a few requests at `LINGER_S` and by tens at
`record_linger_s`.

A write the store refuses (a full disk, an unwritable directory) is kept in memory and tried
again with backoff; `health()` then reports degraded with the reason. Only when more than
`max_kept` writes wait is the oldest dropped, counted in `writes_lost` and logged as an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import tenacity

from beliefs.store.thread import StoreThread
from extractor.jobs import JobQueue, pending_job
from extractor.journal import JobJournal
from extractor.turn import Turn
from proxy.gateway.counters import Counters
from proxy.gateway.injections import InjectionRecord
from proxy.gateway.journal_thread import JournalThread
from proxy.gateway.write_batches import Item, Write, apply_folding, describe, rewrite

log = logging.getLogger("tenure.proxy")

LINGER_S = 0.02  # how long a write waits for others to share its commit
MAX_KEPT = 10_000  # refused writes kept for another try before the oldest is dropped
RETRY_S = 0.5  # first wait before a refused write is tried again (doubling up to RETRY_MAX_S)
RETRY_MAX_S = 10.0
RECORD_LINGER_S = 0.25  # how long an injection record may wait for others before it is written
RECORD_BATCH = 1024  # held writes (about three a request) written as soon as this many wait


@dataclass(slots=True)
class WriteHealth:
    """Whether the store takes the writes, and what waits for another try."""

    ok: bool = True
    reason: str = ""
    kept: int = 0
    lost: int = 0
    failing_since: float | None = None  # time.time() of the first refused write of this spell


class StoreWriter:
    """One task drains the queue; `stop()` writes everything still queued before returning."""

    def __init__(
        self,
        thread: StoreThread,
        counters: Counters,
        jobs: JobQueue | None = None,
        *,
        linger_s: float = LINGER_S,
        max_kept: int = MAX_KEPT,
        retry_s: float = RETRY_S,
        record_linger_s: float = RECORD_LINGER_S,
        journal: JobJournal | None = None,
    ) -> None:
        self._journal = journal
        self._journal_thread: JournalThread | None = None  # while started, with a journal
        self._journal_failing = False
        self._linger = linger_s
        self._record_linger = record_linger_s
        self._held: list[Item] = []  # injection records waiting to share a later commit
        self._held_since = 0.0  # time.monotonic() of the oldest held record
        self._thread = thread
        self._counters = counters
        self._jobs = jobs
        self._queue: asyncio.Queue[Item | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._hurry = asyncio.Event()
        self._kept: deque[Item] = deque()
        self._max_kept = max(1, max_kept)
        # Doubling from retry_s to RETRY_MAX_S, with jitter: replicas that lost one database
        # together do not all come back at the same instant.
        self._backoff = tenacity.wait_exponential_jitter(
            multiplier=retry_s, max=RETRY_MAX_S, jitter=retry_s
        )
        self._refusals = 0  # refused writes in a row
        self._retry_at = 0.0  # time.monotonic() when kept writes are tried again
        self._retrying = 0  # kept writes in the write under way
        self._health = WriteHealth()
        # Extraction jobs not in the store yet (queued, journaled, kept): id(item) -> created.
        self._jobs_waiting: dict[int, float] = {}
        # Journaled jobs let go of from memory past max_kept: segment -> {job id: created}.
        self._journal_only: dict[int, dict[str, float]] = {}
        # The commits' futures answered True whose replies have not gone on yet (`ended`).
        self._answered: set[asyncio.Future[bool]] = set()

    @property
    def pending(self) -> int:
        journaling = self._journal_thread.waiting if self._journal_thread is not None else 0
        return self._queue.qsize() + len(self._kept) + len(self._held) + journaling

    def health(self) -> WriteHealth:
        self._health.kept = len(self._kept) + self._retrying
        return self._health

    def jobs_waiting(self) -> tuple[int, float]:
        """Extraction jobs in memory, not in the store yet (queued, journaled and waiting to
        share a commit, kept while the store refuses writes): how many, and the oldest one's
        age in seconds (0 when none)."""
        times = [*self._jobs_waiting.values(), *self._journaled_times()]
        if not times:
            return 0, 0.0
        return len(times), max(0.0, time.time() - min(times))

    def _journaled_times(self) -> list[float]:
        return [t for ids in self._journal_only.values() for t in ids.values()]

    def start(self) -> None:
        self._task = asyncio.create_task(self._drain(), name="tenure-store-writer")
        if self._journal is not None:
            self._journal_thread = JournalThread(self._journal, self._journaled)
            self._journal_thread.start()

    def submit(self, label: str, write: Write, *, hold: bool = False) -> None:
        """Queue `write(store)`; never blocks the caller. `hold`: the write may wait, as an
        injection record does, to share a later commit with the writes of other requests."""
        self._queue.put_nowait(Item(label, write, hold=hold))

    def submit_record(self, record: InjectionRecord) -> None:
        """Queue an injection record; the records of a batch go in one statement."""
        self._queue.put_nowait(Item("injection", record=record))

    def submit_job(self, turn: Callable[[], Turn | None]) -> None:
        """Queue an extraction job; `turn()` runs on the store thread (parsing the captured
        exchange off the request path) and the jobs of a batch go in one INSERT."""
        self._queue.put_nowait(self._job(Item("job", turn=turn)))

    async def commit_job(self, turn: Callable[[], Turn | None]) -> bool:
        """Write an extraction job now, with whatever else is queued, and wait for the commit.

        True once it is on disk (in the journal, or committed to the table); False when the
        store refused it (it is then kept and tried again like any refused write). Cancelling
        the wait leaves the write queued.
        """
        done = self.commit_job_soon(turn)
        try:
            return await asyncio.shield(done)
        finally:
            self.ended(done)

    def commit_job_soon(
        self, turn: Callable[[], Turn | None], done: asyncio.Future[bool] | None = None
    ) -> asyncio.Future[bool]:
        """`commit_job` without the wait: the future it waits for, `done` when given (the
        writer answers a future only while nobody else has: a caller may settle or cancel its
        own, and the write stays queued all the same; whoever waits on it calls `ended` once
        it goes on: `ends_first` counts it due until then). With a journal, `turn()` runs here,
        on the loop: the reply waits for its row anyway, and the journal thread then needs the
        GIL only around one write and one sync."""
        if done is None:
            done = asyncio.get_running_loop().create_future()
        item = self._job(Item("job", turn=turn, done=done))
        if self._journal_thread is None or not self._journal_row(item):
            self._queue.put_nowait(item)
            self._hurry.set()
        elif item.pending is None:  # no job (a tool call's reply, a message sent again)
            self._jobs_waiting.pop(id(item), None)
            if not done.done():
                done.set_result(True)
        else:
            self._journal_thread.put(item)
        return done

    def _journal_row(self, item: Item) -> bool:
        """Build the job's row for the journal (`pending`, None when the turn makes no job);
        False when building failed: the store thread tries again and records the failure as
        it does any bad write's."""
        try:
            built = item.job_turn()
            item.pending = pending_job(built) if built is not None else None
        except Exception:
            return False
        return True

    def _job(self, item: Item) -> Item:
        self._jobs_waiting[id(item)] = time.time()
        return item

    async def flush(self) -> None:
        """Wait until everything submitted so far is written or kept for a retry (tests)."""
        await self._journal_idle()
        if self._task is not None:
            self._queue.put_nowait(_FLUSH)  # held records too
        await self._queue.join()

    async def stop(self) -> None:
        if self._task is None:
            return
        if self._journal_thread is not None:
            await self._journal_thread.idle()
            self._journal_thread.stop()
            self._journal_thread = None  # a job made durable from now on goes to the store
        self._queue.put_nowait(None)
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None
        while self._kept:  # the store still refuses them and the process is going away
            item = self._kept.popleft()
            if item.pending is not None:
                continue  # still in the journal: the next start writes it
            self._lose(item, "the server stopped while the store refused writes")
        if self._journal is not None:
            self._journal.close()

    async def _journal_idle(self) -> None:
        """Wait until every durable job handed over so far has been appended (or given to the
        store when the journal refused it)."""
        if self._journal_thread is not None:
            await self._journal_thread.idle()

    @property
    def ends_due(self) -> bool:
        """Whether a reply's end is due on the loop: its job's append is over, and the journal
        thread's word of it, or the reply's task, waits in the loop's queue."""
        thread = self._journal_thread
        return bool(self._answered) or (thread is not None and thread.telling)

    def ended(self, done: asyncio.Future[bool]) -> None:
        """The reply that waited on `done` went on (or gave up waiting)."""
        self._answered.discard(done)

    async def ends_first(self) -> None:
        """Let the replies whose end is due go first: work that holds the loop for long (a
        search) calls this before it starts. A due reply's next step is already in the loop's
        queue, so going to the back of it once, or twice when the journal thread's word must
        first wake the reply, lets it run first; never more, so nothing waits on a stream of
        replies."""
        for _ in range(2):
            if not self.ends_due:
                return
            await asyncio.sleep(0)

    def _journaled(self, items: list[Item], segment: int, error: Exception | None) -> None:
        """On the loop, once per append: let the replies end, and let the jobs wait to share a
        table commit; when the journal's disk refused, commit them through the store."""
        if error is not None:
            (log.warning if self._journal_failing else log.error)(
                "the job journal refused %d job(s) (%s); they are committed to the store "
                "instead, as with TENURE_JOURNAL=0",
                len(items),
                describe(error),
            )
            self._journal_failing = True
            for item in items:
                item.pending = None
                self._queue.put_nowait(item)
            self._hurry.set()
            return
        if self._journal_failing:
            log.warning("the job journal takes jobs again")
            self._journal_failing = False
        for item in items:
            item.segment = segment
            if item.done is not None and not item.done.done():
                item.done.set_result(True)
                self._answered.add(item.done)
            self._queue.put_nowait(item)

    async def _drain(self) -> None:
        while True:
            first = await self._next()
            if first is not None and first.done is None and first is not _FLUSH and self._linger:
                # Let the writes of a few more requests join this commit: a DuckDB commit costs
                # about a millisecond of CPU, which sequential requests would otherwise pay each.
                # A job a reply waits for (`commit_job`) cuts the wait short.
                self._hurry.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._hurry.wait(), self._linger)
            batch: list[Item | None] = [] if first is _RETRY else [first]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            queued = len(batch)
            urgent = any(item is None or item is _FLUSH for item in batch)
            items = self._with_held(
                [item for item in batch if item is not None and not _marker(item)],
                now=first is _RETRY or urgent,
            )
            try:
                if self._kept and not urgent and time.monotonic() < self._retry_at:
                    self._keep_until_retry(items)
                else:
                    retried = list(self._kept)
                    self._kept.clear()
                    self._retrying = len(retried)
                    if items or retried:
                        await self._write(retried + items)
            finally:
                self._retrying = 0
                for _ in range(queued):
                    self._queue.task_done()
            if any(item is None for item in batch):
                return

    def _keep_until_retry(self, items: list[Item]) -> None:
        """While the store refuses writes, new ones join the kept ones until the next try is
        due (the backoff holds under load); a reply waiting for its job is told at once."""
        for item in items:
            if item.done is not None and not item.done.done():
                item.done.set_result(False)
        self._kept.extend(items)
        self._trim_kept()

    def _trim_kept(self) -> None:
        while len(self._kept) > self._max_kept:
            item = self._kept.popleft()
            if item.pending is None:
                self._lose(item, "more writes waiting than can be kept")
                continue
            # Safe in the journal: let go of here, read back from there once the store is back.
            if not self._journal_only:
                log.warning("more writes wait than can be kept: journaled jobs now wait there")
            ids = self._journal_only.setdefault(item.segment, {})
            ids[item.pending.id] = self._jobs_waiting.pop(id(item), time.time())

    async def _write_from_journal(self) -> None:
        """The store takes writes again: write the jobs let go of from memory, from the
        journal (kept for the next try, or the next start, if that fails)."""
        wanted, self._journal_only = self._journal_only, {}
        try:
            written = await self._thread.run(
                rewrite, self._jobs, self._journal, {n: set(ids) for n, ids in wanted.items()}
            )
        except Exception as exc:
            for number, ids in wanted.items():
                self._journal_only.setdefault(number, {}).update(ids)
            log.warning("jobs waiting in the journal are tried again later: %s", describe(exc))
            return
        self._counters.jobs_enqueued += written
        log.warning("%d job(s) that waited in the journal are written", written)

    def _with_held(self, items: list[Item], *, now: bool) -> list[Item]:
        """`items` with the injection records taken out to wait for a later commit, or with
        every held record put back when they are due (`now`, too old, or enough of them)."""
        records = [item for item in items if _holds(item)]
        if records and not self._held:
            self._held_since = time.monotonic()
        self._held.extend(records)
        due = (
            now
            or len(self._held) >= RECORD_BATCH
            or time.monotonic() - self._held_since >= self._record_linger
        )
        rest = [item for item in items if not _holds(item)]
        if not due or not self._held:
            return rest
        held, self._held = self._held, []
        return held + rest

    async def _next(self) -> Item | None:
        """The next queued item; `_RETRY` when kept writes are due for another try or held
        records for their commit."""
        waits = [self._retry_at - time.monotonic()] if self._kept else []
        if self._held:
            waits.append(self._held_since + self._record_linger - time.monotonic())
        if not waits:
            return await self._queue.get()
        try:
            return await asyncio.wait_for(self._queue.get(), max(0.0, min(waits)))
        except TimeoutError:
            return _RETRY

    async def _write(self, items: list[Item]) -> None:
        try:
            results = await self._thread.run(
                apply_folding, self._thread.store, self._jobs, self._journal, items
            )
        except Exception as exc:  # the store thread itself failed: keep everything
            results = [(item, describe(exc), True) for item in items]
        refused: list[Item] = []
        for item, error, keep in results:
            if item.done is not None and not item.done.done():
                item.done.set_result(not error)
            if not error or not keep:
                self._jobs_waiting.pop(id(item), None)
            if not error:
                if item.label == "injection":
                    self._counters.records_written += 1
                elif item.label == "job":
                    self._counters.jobs_enqueued += 1
                continue
            self._counters.write_failures += 1
            if keep:
                refused.append(item)
            else:
                self._lose(item, error)
        health = self._health
        if refused:
            if health.ok:
                health.failing_since = time.time()
                log.error(
                    "the store refused %d write(s): %s; they are kept in memory and tried "
                    "again until it takes them (see /healthz)",
                    len(refused),
                    _first_error(results),
                )
            health.ok, health.reason = False, _first_error(results)
            self._refusals += 1
            state = tenacity.RetryCallState(tenacity.Retrying(), None, (), {})
            state.attempt_number = self._refusals
            self._retry_at = time.monotonic() + self._backoff(state)
            self._kept.extend(refused)
            self._trim_kept()
        elif not health.ok and not self._kept:
            log.warning("the store takes writes again; every kept write is written")
            health.ok, health.reason, health.failing_since = True, "", None
            self._refusals = 0
        if health.ok and self._journal_only:
            await self._write_from_journal()

    def _lose(self, item: Item, error: str) -> None:
        self._jobs_waiting.pop(id(item), None)
        self._counters.writes_lost += 1
        self._health.lost += 1
        log.error("LOST a %s write (%d lost since start): %s", item.label, self._health.lost, error)


_RETRY = Item("retry")  # a marker: no new item, try the kept ones (and write held records)
_FLUSH = Item("flush")  # a marker: write held records now


def _marker(item: Item) -> bool:
    return item is _RETRY or item is _FLUSH


def _holds(item: Item) -> bool:
    """Whether the item may wait to share a later commit: an injection record, a job already
    safe in the journal, or a write submitted to be held."""
    return item.hold or item.record is not None or item.pending is not None


def _first_error(results: list[tuple[Item, str, bool]]) -> str:
    return next((error for _, error, keep in results if error and keep), "")
