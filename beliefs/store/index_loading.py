"""Filling the store's index from its rows: all at once, in the background, or (bounded) the
most recently active users first, with the others read when first asked for."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime

import duckdb

from beliefs.model.errors import BeliefError
from beliefs.model.record import BeliefRecord
from beliefs.store.connection import Connection
from beliefs.store.database import BeliefDatabase
from beliefs.store.rows import SELECT_BELIEFS, record_from_row

# Rows fetched and decoded at a time while the index fills. Small: each chunk's row tuples die
# once decoded, among the strings the index keeps, and 20k at a time left ~35 MB more resident
# at 100k beliefs (freed but too scattered to hand back), and loaded no faster.
LOAD_CHUNK = 2_000
LOAD_USERS_AT_ONCE = 500  # users read by one statement when a bounded index fills
SELECT_IDS = "SELECT id FROM beliefs"
SELECT_USERS_BY_ACTIVITY = (
    "SELECT user_id, count(*) FROM beliefs WHERE deleted_at IS NULL GROUP BY user_id "
    "ORDER BY max(coalesce(last_reinforced_at, updated_at)) DESC, user_id"
)


def live_rows_of(user_ids: Sequence[str]) -> Iterator[tuple[str, list[str]]]:
    """Statements, with their parameters, selecting the live rows of `user_ids`, a batch of
    users at a time."""
    for start in range(0, len(user_ids), LOAD_USERS_AT_ONCE):
        batch = list(user_ids[start : start + LOAD_USERS_AT_ONCE])
        marks = ", ".join("?" for _ in batch)
        yield f"{SELECT_BELIEFS} WHERE deleted_at IS NULL AND user_id IN ({marks})", batch


class StoredUsers:
    """The users a bounded index does not hold, read from the DuckDB file on a cursor of
    their own (the store's connection belongs to its thread)."""

    def __init__(self, conn: duckdb.DuckDBPyConnection) -> None:
        self._cursor = conn.cursor()
        self._lock = threading.Lock()

    def owner_of(self, belief_id: str) -> str | None:
        with self._lock:
            row = self._cursor.execute(
                "SELECT user_id FROM beliefs WHERE id = ? AND deleted_at IS NULL", [belief_id]
            ).fetchone()
        return None if row is None else str(row[0])

    def live_beliefs(self, user_ids: Sequence[str]) -> dict[str, list[BeliefRecord]]:
        out: dict[str, list[BeliefRecord]] = {u: [] for u in user_ids}
        for statement, batch in live_rows_of(user_ids):
            with self._lock:
                rows = self._cursor.execute(statement, batch).fetchall()
            times: dict[datetime, datetime] = {}
            for row in rows:
                belief = record_from_row(row, times)
                out[belief.user_id].append(belief)
        return out

    def close(self) -> None:
        with self._lock:
            self._cursor.close()


class IndexLoading(BeliefDatabase):
    """Loads the index the store was handed; a bounded index reads other users through
    `StoredUsers`."""

    _users: StoredUsers | None = None  # a bounded index's reader of other users

    def bound_index(self, bound: int) -> None:
        """Have the index hold about `bound` beliefs, whole users, reading the others from
        the DuckDB file when they are asked for."""
        if isinstance(self.conn, duckdb.DuckDBPyConnection):
            self._users = StoredUsers(self.conn)
            self.index.source = self._users
            self.index.bound = bound

    def close(self) -> None:
        if self._users is not None:
            self._users.close()
        super().close()

    def load_index(self, conn: Connection) -> None:
        """Fill the index from every stored row, holding its lock throughout.

        Rows are decoded without validation (they were valid when written) a chunk at a
        time, and each chunk is frozen out of the collector's reach: a long-lived mirror of a
        million rows would otherwise be rescanned by every full collection while it grows.
        """
        index = self.index
        self._loaded = True
        with index.lock:
            if index.bounded:
                self._load_hottest(conn)
            else:
                cursor = conn.execute(SELECT_BELIEFS)
                while rows := cursor.fetchmany(LOAD_CHUNK):
                    times: dict[datetime, datetime] = {}  # one object per time in a chunk
                    for row in rows:
                        belief = record_from_row(row, times)
                        if belief.deleted_at is None:
                            index.add_loaded(belief)
                        else:
                            self._deleted_ids.add(belief.id)
                    gc.freeze()
            index.packed()
            gc.freeze()
            index.version += 1
            index.derived.clear()
            index.ready.set()

    def _load_hottest(self, conn: Connection) -> None:
        """A bounded index's start: the users most recently active first, each in whole, as
        many as the bound holds (the others are read when first asked for)."""
        index = self.index
        self._deleted_ids.update(
            bid for (bid,) in conn.execute(f"{SELECT_IDS} WHERE deleted_at IS NOT NULL").fetchall()
        )
        users = conn.execute(SELECT_USERS_BY_ACTIVITY).fetchall()
        room = index.bound
        chosen: list[str] = []
        for user_id, count in users:
            if count > room:
                break
            chosen.append(user_id)
            room -= count
        for user_id in reversed(chosen):  # the hottest held as the most recently used
            index.hold(user_id)
        for statement, batch in live_rows_of(chosen):
            cursor = conn.execute(statement, batch)
            while rows := cursor.fetchmany(LOAD_CHUNK):
                times: dict[datetime, datetime] = {}
                for row in rows:
                    index.add_loaded(record_from_row(row, times))
                gc.freeze()

    def load_in_background(self, prepare: Callable[[], object] | None = None) -> threading.Thread:
        """Fill the index on its own thread and cursor; returns once that thread holds the
        index's lock, so any reader from then on waits for the full index. `prepare` runs on
        that thread first, under the lock (work that retrieval needs before its first turn)."""
        if not isinstance(self.conn, duckdb.DuckDBPyConnection):
            raise BeliefError("only a DuckDB store loads its index in the background")
        self.index.ready.clear()
        self._loaded = True
        cursor = self.conn.cursor()
        holding = threading.Event()

        def run() -> None:
            try:
                with self.index.lock:
                    holding.set()
                    if prepare is not None:
                        prepare()
                    self.load_index(cursor)
            except Exception as exc:  # shown by the server's health check; memory stays off
                self.index.failed = f"{type(exc).__name__}: {exc}"[:300]
                holding.set()
            finally:
                cursor.close()

        thread = threading.Thread(target=run, name="tenure-index-load", daemon=True)
        thread.start()
        holding.wait()
        return thread
