"""Compaction runs on one replica at a time when replicas share a PostgreSQL database."""

from __future__ import annotations

import asyncio

import pytest

from beliefs.opening import open_store
from beliefs.store.thread import StoreThread
from compaction import CompactionBusy, Compactor


def test_a_second_replica_is_told_a_run_is_in_progress(pg_url: str) -> None:
    a = open_store(pg_url, replica="a")
    b = open_store(pg_url, replica="b")
    thread_b = StoreThread(b)
    try:
        assert a.try_lock("tenure.compaction")  # replica A is compacting
        compactor = Compactor(thread_b)
        with pytest.raises(CompactionBusy, match="another replica"):
            asyncio.run(compactor.run())
        a.unlock("tenure.compaction")
        report = asyncio.run(compactor.run())
        assert report.status == "done"
        assert a.try_lock("tenure.compaction")  # B let go of it after its run
    finally:
        thread_b.close()
        a.close()
        b.close()
