"""StoreThread runs every store call on one worker thread, in order."""

from __future__ import annotations

import asyncio
import threading

from beliefs.model.models import Belief
from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread


def test_calls_run_on_one_thread_and_return_results(store: BeliefStore) -> None:
    thread = StoreThread(store)
    seen: set[int] = set()

    def create(name: str) -> str:
        seen.add(threading.get_ident())
        return store.create(Belief(user_id="u", canonical_name=name)).id

    async def main() -> list[str]:
        return await asyncio.gather(*(thread.run(create, f"n{i}") for i in range(5)))

    try:
        ids = asyncio.run(main())
    finally:
        thread.close()
    assert len(seen) == 1 and threading.get_ident() not in seen
    assert [b.id for b in store.list()] == ids


def test_errors_reach_the_caller(store: BeliefStore) -> None:
    thread = StoreThread(store)

    async def main() -> str:
        try:
            await thread.run(store.get, "missing")
        except Exception as exc:
            return type(exc).__name__
        return "no error"

    try:
        assert asyncio.run(main()) == "BeliefNotFound"
    finally:
        thread.close()
