"""The memory of each typed message, kept so every request of its tool loop carries it again.

The first request of a turn searches; the requests of its tool loop (`turn_loop.py`) reuse what
it placed, byte for byte: the agent's answer is written by the last of them, which needs the
turn's relevant beliefs as much as the first, and a block that changed between them would break
the prompt cache the client built. Kept in this process (the usual case: a loop runs in
seconds) and, once a reply calls tools (a loop follows), in the `turn_memory` table, so a loop
that moves to another replica or outlives a restart still finds it; with neither, the loop
request searches on the typed message again. A reply that calls no tools ends its turn: most
chat requests never write the row.
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from beliefs.model.models import storable
from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from extractor.redact import redact
from extractor.turn import PersonaRef
from proxy.gateway.background import StoreWriter
from proxy.gateway.identity import Identity
from proxy.gateway.memory import Memory, MemoryBuilder
from proxy.gateway.turn_loop import TurnLoop

log = logging.getLogger("tenure.proxy")

TTL_S = 6 * 3600.0  # a loop left this long is over: its next request is searched afresh
PRUNE_EVERY = 512  # kept turns written between deletions of the expired ones

_COLUMNS = (
    ("key", "VARCHAR"),
    ("created_at", "TIMESTAMPTZ"),
    ("system_block", "VARCHAR"),
    ("user_block", "VARCHAR"),
    ("layers", "JSON"),
    ("persona", "BOOLEAN"),
    ("query", "VARCHAR"),
    ("persona_version", "VARCHAR"),
    ("persona_carries", "INTEGER"),
)
_NAMES = tuple(name for name, _ in _COLUMNS)
# The rows of a commit as one list-of-structs parameter: binding nine values a row in a VALUES
# list cost more than the upsert itself.
_SAVE_SQL = (
    f"INSERT OR REPLACE INTO turn_memory ({', '.join(_NAMES)}) "
    f"SELECT {', '.join(f'r.{name}' for name in _NAMES)} FROM "
    f"(SELECT unnest(?::STRUCT({', '.join(f'{n} {t}' for n, t in _COLUMNS)})[]) AS r)"
)
SAVE_CHUNK = 256  # rows per statement: one statement per commit below that
_LOAD_SQL = (
    "SELECT created_at, system_block, user_block, layers, persona, query, persona_version, "
    "persona_carries FROM turn_memory WHERE key = ?"
)
_PRUNE_SQL = "DELETE FROM turn_memory WHERE created_at < ?"
_QUERY = 6  # the query's place in a saved row


class LoopMemories:
    """Each recent turn's memory by the turn's key (`TurnLoop.key`)."""

    def __init__(
        self, thread: StoreThread, writer: StoreWriter, size: int = 4096, ttl_s: float = TTL_S
    ) -> None:
        self._thread = thread
        self._writer = writer
        self._size = size
        self._ttl = ttl_s
        # key -> (when it expires, the memory, whether the store has it)
        self._kept: OrderedDict[str, tuple[float, Memory, bool]] = OrderedDict()
        self._puts = 0

    async def get(self, key: str) -> Memory | None:
        """The memory kept for a turn, from this process or the store; None when none is."""
        entry = self._kept.get(key)
        if entry is not None:
            return entry[1] if entry[0] > time.monotonic() else None
        try:
            row = await self._thread.run(self._load, key)
        except Exception:
            log.exception("reading a turn's memory failed; the tool loop request searches again")
            return None
        if row is None:
            return None
        created, system, user, layers, persona, query, version, carries = row
        if created < datetime.now(UTC) - timedelta(seconds=self._ttl):
            return None
        ref = None if version is None else PersonaRef(version=version, carries=carries)
        memory = Memory(system, user, _layers(layers), bool(persona), query, ref)
        self._remember(key, memory, saved=True)
        return memory

    def put(self, key: str, memory: Memory) -> None:
        """Keep a turn's memory in this process; `save` writes it to the store."""
        self._remember(key, memory, saved=False)

    def save(self, key: str) -> None:
        """Write a turn's kept memory to the store in the background, once: its reply called
        tools, so the loop's next requests may reach another replica or a restarted process."""
        entry = self._kept.get(key)
        if entry is None or entry[2]:
            return
        self._kept[key] = (entry[0], entry[1], True)
        memory = entry[1]
        self._puts += 1
        prune = self._puts % PRUNE_EVERY == 0
        now = datetime.now(UTC)
        row: list[object] = [key, now, storable(memory.system_block), storable(memory.user_block)]
        row += [json.dumps(memory.layers), memory.persona, storable(memory.query)]
        ref = memory.persona_ref
        row += [None, None] if ref is None else [ref.version, ref.carries]

        def save(store: BeliefStore) -> None:
            # The rows of one commit go as one statement: DuckDB's upsert costs about 2 ms
            # of CPU a statement, a batch of 25 rows about 0.3 ms a row.
            store.defer("turn_memory", partial(save_rows, store), row)
            if prune:
                store.execute(_PRUNE_SQL, [now - timedelta(seconds=self._ttl)])

        self._writer.submit("turn_memory", save, hold=True)

    def _load(self, key: str) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._thread.store.execute(_LOAD_SQL, [key]).fetchone()
        return row

    def _remember(self, key: str, memory: Memory, *, saved: bool) -> None:
        self._kept[key] = (time.monotonic() + self._ttl, memory, saved)
        self._kept.move_to_end(key)
        while len(self._kept) > self._size:
            self._kept.popitem(last=False)


def save_rows(store: BeliefStore, rows: list[list[object]]) -> None:
    """Upsert turn memories in statements of up to `SAVE_CHUNK` rows; store thread. A key
    saved twice keeps its later row, as one statement per row would (one statement may not
    upsert a key twice). The turn's words are stored redacted, as an injection record's are:
    a secret typed into a turn is never written."""
    latest = [
        [*row[:_QUERY], storable(redact(str(row[_QUERY]))), *row[_QUERY + 1 :]]
        for row in {str(row[0]): row for row in rows}.values()
    ]
    for start in range(0, len(latest), SAVE_CHUNK):
        chunk = [dict(zip(_NAMES, row, strict=True)) for row in latest[start : start + SAVE_CHUNK]]
        store.execute(_SAVE_SQL, [chunk])


def _layers(value: Any) -> dict[str, list[str]]:
    layers = json.loads(value) if isinstance(value, str) else value
    return {str(k): [str(i) for i in v] for k, v in (layers or {}).items()}


async def turn_memory(
    builder: MemoryBuilder,
    loops: LoopMemories,
    identity: Identity,
    turn: TurnLoop,
    query: str,
    model: str,
) -> Memory | None:
    """The memory of a request: a tool loop's request gets its typed message's again; any
    other request (or a loop whose first request left nothing) is searched and kept in this
    process (`LoopMemories.save` writes it once its reply calls tools)."""
    key = turn.key(identity)
    if turn.looping and key is not None:
        kept = await loops.get(key)
        if kept is not None:
            return kept
    memory = await builder.build(identity, query, model)
    if memory is not None and not memory.empty and key is not None:
        loops.put(key, memory)
    return memory
