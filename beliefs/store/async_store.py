"""The store as async code sees it: every database call goes through the one store thread,
which callers never name (`await store.get(id)`, `await store.apply(fn, ...)`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from beliefs.index.belief_index import BeliefIndex
from beliefs.model.models import Belief, HistoryEvent
from beliefs.model.rules import RuleSet
from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread

P = ParamSpec("P")
T = TypeVar("T")


class AsyncStore:
    """A `BeliefStore` behind its store thread: database calls are awaited, in call order;
    the in-memory index (and the rules) are read on the event loop, as they always were."""

    def __init__(self, thread: StoreThread) -> None:
        self._thread = thread
        self.store: BeliefStore = thread.store  # for loop-side reads of what it holds in memory

    async def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`fn(*args, **kwargs)` on the store thread (a job queue's or a book's method)."""
        return await self._thread.run(fn, *args, **kwargs)

    async def apply(
        self, fn: Callable[Concatenate[BeliefStore, P], T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """`fn(store, *args, **kwargs)` on the store thread."""
        return await self._thread.run(fn, self.store, *args, **kwargs)

    @property
    def index(self) -> BeliefIndex:
        return self.store.index

    @property
    def rules(self) -> RuleSet:
        return self.store.rules

    @property
    def dialect(self) -> str:
        return self.store.dialect

    async def get(self, belief_id: str) -> Belief:
        return await self.call(self.store.get, belief_id)

    async def chain(self, belief_id: str) -> list[Belief]:
        return await self.call(self.store.chain, belief_id)

    async def history(self, belief_id: str) -> list[HistoryEvent]:
        return await self.call(self.store.history, belief_id)
