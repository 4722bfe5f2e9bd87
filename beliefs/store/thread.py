"""One worker thread that owns every DuckDB call of the server (connections aren't thread-safe)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from beliefs.store.belief_store import BeliefStore

P = ParamSpec("P")
T = TypeVar("T")


class StoreThread:
    """`await thread.run(fn, *args)` runs `fn` on the single store thread, in call order."""

    def __init__(self, store: BeliefStore) -> None:
        self.store = store
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tenure-store")

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Queue `fn` on the store thread from any thread, without waiting for it."""
        return self._executor.submit(fn)

    def close(self) -> None:
        """Finish queued calls, then stop the thread (the store itself stays open)."""
        self._executor.shutdown(wait=True)
