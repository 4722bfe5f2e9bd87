"""Runs never overlap; the schedule records failures and keeps going."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from compaction import CompactionBusy, CompactionConfig, CompactionScheduler, Compactor
from tests.compaction.conftest import MODEL, review
from tests.compaction.test_conservative import two_clusters
from tests.extractor.fake_llm import FakeChatModel


def test_a_second_run_while_one_is_in_progress_is_refused(store: BeliefStore) -> None:
    two_clusters(store)
    llm = FakeChatModel()
    llm.default = review()
    llm.gate = asyncio.Event()

    async def go() -> Any:
        thread = StoreThread(store)
        try:
            compactor = Compactor(thread, llm=llm, config=CompactionConfig(model=MODEL))
            first = asyncio.create_task(compactor.run())
            while not llm.calls:
                await asyncio.sleep(0.01)
            assert compactor.running
            with pytest.raises(CompactionBusy):
                await compactor.run()
            scheduler = CompactionScheduler(compactor, 60)
            assert await scheduler.tick() is None  # a scheduled tick just skips
            llm.gate.set()
            return await first
        finally:
            thread.close()

    assert asyncio.run(go()).errors == []


class Broken:
    running = False

    async def run(self, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")


def test_the_schedule_survives_a_failing_run() -> None:
    async def go() -> CompactionScheduler:
        scheduler = CompactionScheduler(Broken(), 0.01)  # type: ignore[arg-type]
        scheduler.start()
        await asyncio.sleep(0.1)
        await scheduler.stop()
        return scheduler

    scheduler = asyncio.run(go())
    assert scheduler.last_error == "RuntimeError: disk on fire"
    assert scheduler.state()["last_error"] == "RuntimeError: disk on fire"


def test_scheduled_runs_happen_on_the_interval(store: BeliefStore) -> None:
    async def go() -> CompactionScheduler:
        thread = StoreThread(store)
        try:
            scheduler = CompactionScheduler(Compactor(thread), 0.05)
            scheduler.start()
            while scheduler.last is None:
                await asyncio.sleep(0.01)
            await scheduler.stop()
            return scheduler
        finally:
            thread.close()

    scheduler = asyncio.run(go())
    assert scheduler.last is not None and scheduler.last.trigger == "scheduled"
