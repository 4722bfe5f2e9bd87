"""A queued write of the background writer, and how a batch of them is applied on the store
thread: all in one transaction, else each alone, sorting what the store refused (kept for
another try) from what was wrong (lost, logged)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from beliefs.store.belief_store import BeliefStore
from beliefs.store.connection import store_refused
from extractor.jobs import JobQueue, PendingJob, pending_job
from extractor.journal import JobJournal
from extractor.turn import Turn
from proxy.gateway.injections import InjectionRecord, save_records

log = logging.getLogger("tenure.proxy")

Write = Callable[[BeliefStore], object]


@dataclass(slots=True)
class Item:
    label: str
    write: Write | None = None
    record: InjectionRecord | None = None
    turn: Callable[[], Turn | None] | None = None  # builds an extraction job's turn
    done: asyncio.Future[bool] | None = field(default=None, compare=False)  # commit_job's waiter
    built: list[Turn | None] | None = None  # the turn, once built (a kept job is not rebuilt)
    pending: PendingJob | None = None  # a journaled job, to be folded into the table
    segment: int = -1  # the journal segment holding `pending`
    hold: bool = False  # may wait to share a later commit, as an injection record does

    def job_turn(self) -> Turn | None:
        if self.turn is None:
            return None
        if self.built is None:
            self.built = [self.turn()]
        return self.built[0]


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip()[:500]


def apply_folding(
    store: BeliefStore, jobs: JobQueue | None, journal: JobJournal | None, items: list[Item]
) -> list[tuple[Item, str, bool]]:
    """`_apply`, then the journal forgets the jobs the table now has (or that were lost)."""
    results = _apply(store, jobs, items)
    if journal is not None:
        journal.folded(
            item.segment for item, _, keep in results if item.pending is not None and not keep
        )
    return results


def _apply(
    store: BeliefStore, jobs: JobQueue | None, items: list[Item]
) -> list[tuple[Item, str, bool]]:
    """All items in one transaction; if that fails, each on its own so one bad write costs
    only itself. Each result: (item, error or "", whether to keep it for another try)."""
    try:
        with store.transaction():
            _write(store, jobs, items)
        return [(item, "", False) for item in items]
    except Exception as exc:
        if len(items) == 1 or store_refused(exc):
            # The store refuses writes as such: trying each alone would only fail again.
            if not store_refused(exc):
                log.exception("background %s write failed", items[0].label)
            return [(item, describe(exc), store_refused(exc)) for item in items]
    results = []
    for item in items:
        try:
            with store.transaction():
                _write(store, jobs, [item])
            results.append((item, "", False))
        except Exception as exc:
            if not store_refused(exc):
                log.exception("background %s write failed", item.label)
            results.append((item, describe(exc), store_refused(exc)))
    return results


def rewrite(jobs: JobQueue | None, journal: JobJournal | None, wanted: dict[int, set[str]]) -> int:
    """Write these journaled jobs from the journal, then let the journal forget them."""
    if jobs is None or journal is None:
        return 0
    found = journal.reread(wanted)
    jobs.replay([job for _, job in found])
    journal.folded(number for number, _ in found)
    return len(found)


def _write(store: BeliefStore, jobs: JobQueue | None, items: list[Item]) -> None:
    save_records(store, [item.record for item in items if item.record is not None])
    journaled = [item.pending for item in items if item.pending is not None]
    turns = [
        turn for item in items if item.pending is None and (turn := item.job_turn()) is not None
    ]
    if turns or journaled:
        if jobs is None:
            raise RuntimeError("an extraction job was queued but the writer has no job queue")
        jobs.insert(journaled + [pending_job(turn) for turn in turns])
    for item in items:
        if item.write is not None:
            item.write(store)
