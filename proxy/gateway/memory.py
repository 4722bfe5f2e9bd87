"""Memory for one request: context assembled from the in-memory index, within a time budget.

Assembly runs inline on the event loop: it is pure CPU work under the GIL, so a thread would
add a hand-off (~0.3 ms measured here) without running in parallel, and under concurrency its
queue made every request miss the budget. The search is given `retrieval_timeout_ms` as a
deadline: past it, it reads no further postings and ranks what it has found, so a slow
retrieval sends the standing layers and the hits found in time rather than nothing (logged and
counted as a retrieval timeout). An error lets the request through without memory, logged and
counted. No DuckDB call happens here: beliefs, rules and personas are the store's in-memory
copies (the persona keeper schedules any regeneration in the background).
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from functools import lru_cache

from beliefs.context.assembly import ContextRequest
from beliefs.context.render import system_block, user_block
from beliefs.search.deadline import Deadline
from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from compaction import PersonaKeeper
from extractor.turn import PersonaRef
from proxy.gateway.counters import Counters
from proxy.gateway.delivery import build_context, context_request
from proxy.gateway.identity import Identity
from proxy.settings import Settings

log = logging.getLogger("tenure.proxy")


@dataclass(frozen=True, slots=True)
class Memory:
    """What goes into one request; `layers` maps layer name to the belief ids rendered in it.

    The beliefs the persona summarises are not listed: `persona_ref` names the persona's
    version and how many it stands for, so what a request records does not grow with them.
    """

    system_block: str
    user_block: str
    layers: dict[str, list[str]]
    persona: bool
    query: str
    persona_ref: PersonaRef | None = None

    @property
    def count(self) -> int:
        return sum(len(ids) for ids in self.layers.values())

    @property
    def approx_tokens(self) -> int:
        return (len(self.system_block) + len(self.user_block) + 3) // 4

    @property
    def empty(self) -> bool:
        return not self.system_block and not self.user_block


class MemoryBuilder:
    """Builds `Memory` for requests, reusing it for a request that repeats exactly."""

    def __init__(
        self,
        store: BeliefStore,
        thread: StoreThread,
        settings: Settings,
        counters: Counters,
        *,
        persona: PersonaKeeper | None = None,
    ) -> None:
        self._store = store
        self._thread = thread
        self._settings = settings
        self._counters = counters
        self._timeout = settings.retrieval_timeout_ms / 1000
        self._persona_read: set[str] = set()
        self._keeper = persona
        self._recent = RecentMemory()

    async def build(self, identity: Identity, query: str, model: str) -> Memory | None:
        """Memory for a request, or None when retrieval failed or the user is not loaded."""
        if not self._store.index.ready.is_set():
            # The index is still filling at start-up: the request goes now, without memory,
            # rather than waiting behind the load.
            self._counters.memory_skipped_loading += 1
            return None
        if not self._store.index.held(identity.user_id):
            # A bounded index does not hold this user: it is read on a thread of its own and
            # this request goes now, without memory (like a request during start-up).
            self._store.index.load_soon(identity.user_id)
            self._counters.memory_skipped_loading += 1
            return None
        try:
            persona, covers = await self._persona(identity.user_id)
            request = context_request(
                self._settings,
                user_id=identity.user_id,
                scopes=identity.scopes,
                agent_id=identity.agent_id,
                query=query,
                model=model,
            )
            # Read before assembling: a write landing meanwhile must not be cached as seen.
            version = self._store.index.user_version(identity.user_id)
            key = (request, persona, covers, version, self._store.contested.version)
            memory = self._recent.get(key, self._store.rules)
            if memory is None:
                rules = self._store.rules
                deadline = Deadline(self._timeout)
                memory = _assemble(self._store, request, persona, covers, deadline)
                cut = deadline.reached  # the search stopped early: a later turn may find more
                if deadline.passed():
                    self._counters.retrieval_timeouts += 1
                    log.warning(
                        "retrieval for user %s took over %.0f ms; request sent with %s",
                        identity.user_id,
                        self._settings.retrieval_timeout_ms,
                        "the hits found by then" if cut else "its memory",
                    )
                if not cut:
                    self._recent.put(key, rules, memory)
        except Exception:
            self._counters.retrieval_failures += 1
            log.exception(
                "retrieval for user %s failed; request sent without memory", identity.user_id
            )
            return None
        return memory

    async def _persona(self, user_id: str) -> tuple[str, frozenset[str] | None]:
        if self._keeper is not None:
            # The stored persona (stale text serves while a regeneration runs), or before one
            # is stored the deterministic summary; never waits for a model.
            return self._keeper.persona_for(user_id)
        if user_id in self._persona_read:
            persona = self._store.get_persona(user_id)  # served from the store's memory
        else:
            persona = await self._thread.run(self._store.get_persona, user_id)
            self._persona_read.add(user_id)
        return (persona.text if persona is not None else ""), None


class RecentMemory:
    """The last few assembled memories, for requests that repeat one exactly.

    An app may send the same request several times (a retry, an app's task calls beside its
    chat): those reuse the memory instead of searching again. A key is the request, the persona
    and the index version; an entry is valid while the rules are the same object, for at most a
    minute (beliefs can expire). A tool loop's requests reuse their turn's memory by the turn
    (`loop_memory.py`).
    """

    def __init__(self, size: int = 256, ttl_s: float = 60.0) -> None:
        self._size = size
        self._ttl = ttl_s
        self._entries: dict[tuple[object, ...], tuple[float, object, Memory]] = {}

    def get(self, key: tuple[object, ...], rules: object) -> Memory | None:
        entry = self._entries.get(key)
        if entry is None or entry[0] < time.monotonic() or entry[1] is not rules:
            return None
        return entry[2]

    def put(self, key: tuple[object, ...], rules: object, memory: Memory) -> None:
        if len(self._entries) >= self._size:
            self._entries.pop(next(iter(self._entries)))
        self._entries[key] = (time.monotonic() + self._ttl, rules, memory)


def _assemble(
    store: BeliefStore,
    request: ContextRequest,
    persona: str,
    covers: frozenset[str] | None,
    deadline: Deadline,
) -> Memory:
    # Rules and personas are the store's in-memory copies: no DuckDB call here.
    context = build_context(store, request, persona, covers, deadline)
    layers = {
        layer: ids
        for layer, ids in context.injected_ids().items()
        if ids and layer != "persona"  # summarised, not rendered: `persona_ref` stands for them
    }
    return Memory(
        system_block=system_block(context),  # the assembler caches the standing text
        user_block=user_block(context),
        layers=layers,
        persona=bool(context.persona),
        query=request.query,
        persona_ref=persona_ref(context.persona, len(context.persona_ids)),
    )


@lru_cache(maxsize=1024)  # a user's persona stays the same from turn to turn
def persona_ref(text: str, carries: int) -> PersonaRef | None:
    """The persona as one reference: a digest of its text (its version) and its belief count."""
    if not text:
        return None
    version = hashlib.sha256(text.encode()).hexdigest()[:16]
    return PersonaRef(version=version, carries=carries)
