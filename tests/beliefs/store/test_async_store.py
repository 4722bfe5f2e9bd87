"""AsyncStore: async code awaits the store's calls, which run on the one store thread."""

from __future__ import annotations

import asyncio
import threading

from beliefs.model.models import Belief
from beliefs.store.async_store import AsyncStore
from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread


def test_calls_run_on_the_store_thread_in_order(store: BeliefStore) -> None:
    thread = StoreThread(store)
    beliefs = AsyncStore(thread)
    seen: set[int] = set()

    def create(on: BeliefStore, name: str) -> str:
        seen.add(threading.get_ident())
        return on.create(Belief(user_id="u", canonical_name=name)).id

    async def main() -> tuple[list[str], str, int, int]:
        ids = await asyncio.gather(*(beliefs.apply(create, f"n{i}") for i in range(4)))
        renamed = await beliefs.apply(BeliefStore.update, ids[0], {"content": "changed"})
        chain = await beliefs.chain(renamed.id)
        history = await beliefs.history(ids[0])
        found = await beliefs.get(ids[0])
        return ids, found.content, len(chain), len(history)

    try:
        ids, content, chained, events = asyncio.run(main())
    finally:
        thread.close()
    assert len(seen) == 1 and threading.get_ident() not in seen
    assert [b.id for b in store.list()] == ids
    assert content == "changed" and chained == 1 and events == 2
    assert beliefs.index is store.index and beliefs.dialect == store.dialect


def test_a_store_error_reaches_the_awaiting_caller(store: BeliefStore) -> None:
    thread = StoreThread(store)
    beliefs = AsyncStore(thread)

    async def main() -> str:
        try:
            await beliefs.call(store.get, "missing")
        except Exception as exc:
            return type(exc).__name__
        return "no error"

    try:
        assert asyncio.run(main()) == "BeliefNotFound"
    finally:
        thread.close()
