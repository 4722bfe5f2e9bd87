"""The belief database under the store: one connection, its transactions and its row IO.

The subclasses in this package add what the store holds beside the rows (`personas`,
`rule_store`, `index_loading`, `replication`) and the belief operations (`history`,
`belief_writes`, `supersession`); `belief_store.BeliefStore` puts them together.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from beliefs.context.contested import Contested
from beliefs.index.belief_index import BeliefIndex
from beliefs.model.errors import BeliefError, BeliefNotFound
from beliefs.model.models import Belief, HistoryEvent, utcnow
from beliefs.store.bulk import BulkWriter
from beliefs.store.connection import Connection, Rows, database_errors
from beliefs.store.feed import ChangeFeed
from beliefs.store.migrations import Migration, migrate, pending
from beliefs.store.rows import (
    BELIEF_COLUMNS,
    EVENT_COLUMNS,
    SELECT_BELIEFS,
    SELECT_EVENTS,
    belief_from_row,
    belief_params,
    event_from_row,
    event_params,
    stored,
)


class BeliefDatabase:
    """One connection; not thread-safe (the server routes calls through `StoreThread`).

    Writes made inside `transaction()` are staged and reach `index`, the index the store is
    handed and keeps current, only after the outermost commit. Belief rows, history events
    and other `defer`red writes are held in memory and written in a few multi-row statements
    just before that commit (or before any read of the database that must see them):
    single-row statements cost about a millisecond each, so a transaction of many small
    changes pays for few of them.
    """

    def __init__(
        self, conn: Connection, path: Path | str, *, read_only: bool, index: BeliefIndex
    ) -> None:
        self.conn = conn
        self.path = path
        self.read_only = read_only
        self.index = index
        self.bulk = BulkWriter(conn)
        self._depth = 0
        # The transaction's view: id -> the row's new state (None: hard-deleted).
        self._staged: dict[str, Belief | None] = {}
        # Ids of committed soft-deleted rows (the index holds only the others).
        self._deleted_ids: set[str] = set()
        # Row writes not yet sent: id -> (the row is new in this transaction, its state).
        self._rows: dict[str, tuple[bool, Belief]] = {}
        self._new_events: list[list[Any]] = []
        self._deferred: dict[str, tuple[Callable[[list[Any]], None], list[Any]]] = {}
        self._flushing = False
        self.contested = Contested()
        self._after_commit: list[Callable[[], None]] = []
        self._schemas: set[frozenset[str]] = set()
        self._loaded = False  # the index was filled, or its background load started
        # PostgreSQL only: this replica's place in the change feed, and the transaction's
        # changes other than rows (personas, rules).
        self.feed: ChangeFeed | None = None
        self._changes: set[tuple[str, str]] = set()

    # -- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def ensure_schema(self, migrations: Sequence[Migration]) -> None:
        """Apply a package's pending migrations (each package owns its tables in this file).

        Raises:
            BeliefError: the file is read-only and needs the upgrade.
        """
        key = frozenset(m.key for m in migrations)
        if key in self._schemas:
            return
        self.flush()
        if self.read_only:
            if pending(self.conn, migrations):
                raise BeliefError(
                    f"the database at {self.path} needs a schema upgrade; run any command "
                    "without --read-only once (with no server running) to apply it"
                )
        else:
            migrate(self.conn, migrations)
        self._schemas.add(key)

    @property
    def dialect(self) -> str:
        """`duckdb` or `postgresql`: for the rare statement only one of them has."""
        return str(getattr(self.conn, "dialect", "duckdb"))

    def has_table(self, name: str) -> bool:
        row = self.conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ? "
            "AND table_schema = current_schema()",
            [name],
        ).fetchone()
        return bool(row and row[0])

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        """Run SQL on the store's connection (gateway and extractor tables share the file).

        Held writes are sent first, so the statement sees everything done before it.
        """
        self.flush()
        return self.conn.execute(sql, list(params))

    # -- transactions --------------------------------------------------------------------------

    def defer(self, key: str, write: Callable[[list[Any]], None], item: Any) -> None:
        """Have `write(items)` called once with every item deferred under `key`, inside the
        current transaction just before its outermost commit (or before a read that must see
        it); dropped on rollback. Outside a transaction `write([item])` runs at once.
        """
        if not self._depth:
            write([item])
            return
        held = self._deferred.get(key)
        if held is None:
            self._deferred[key] = (write, [item])
        else:
            held[1].append(item)

    def flush(self) -> None:
        """Send the held writes now (rows first, then events, then deferred items)."""
        if self._flushing:
            return
        self._flushing = True
        try:
            if self._rows:
                rows, self._rows = self._rows, {}
                inserts = [b for new, b in rows.values() if new]
                updates = [b for new, b in rows.values() if not new]
                # Replacement rows before the rows stamped as superseded by them.
                if inserts:
                    self.bulk.insert("beliefs", BELIEF_COLUMNS, [belief_params(b) for b in inserts])
                if updates:
                    self.bulk.update_beliefs(updates)
            if self._new_events:
                events, self._new_events = self._new_events, []
                self.bulk.insert("belief_events", EVENT_COLUMNS, events)
            while self._deferred:
                key = next(iter(self._deferred))
                write, items = self._deferred.pop(key)
                write(items)
        finally:
            self._flushing = False

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Re-entrant; the index sees changes only after the outermost commit."""
        if self.read_only:
            raise BeliefError(f"{self.path} is open read-only; run the command without --read-only")
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self.conn.execute("BEGIN TRANSACTION")
        self._depth = 1
        try:
            yield
            if self.feed is not None:
                self.feed.record(self, self._feed_changes())
            self.flush()
            self.conn.execute("COMMIT")
        except BaseException:
            self._drop_staged()
            # A failed COMMIT has already ended the transaction.
            with contextlib.suppress(*database_errors()):
                self.conn.execute("ROLLBACK")
            raise
        self._committed()

    def _drop_staged(self) -> None:
        """Forget what the failed transaction held (its rows, events, changes, actions)."""
        self._staged.clear()
        self._rows.clear()
        self._new_events.clear()
        self._deferred.clear()
        self._changes.clear()
        self._after_commit.clear()
        self._depth = 0

    def _committed(self) -> None:
        """Hand the committed rows to the index, then run the after-commit actions."""
        self._depth = 0
        self._changes.clear()
        staged, self._staged = self._staged, {}
        for belief_id, belief in staged.items():
            if belief is None:
                self.index.remove(belief_id)
                self._deleted_ids.discard(belief_id)
            else:
                self.index.upsert(belief)  # a soft-deleted row leaves the index
                if belief.deleted_at is None:
                    self._deleted_ids.discard(belief_id)
                else:
                    self._deleted_ids.add(belief_id)
        after, self._after_commit = self._after_commit, []
        for action in after:
            action()

    def after_commit(self, action: Callable[[], None]) -> None:
        """Run `action` once the outermost transaction commits (at once outside one); a
        rollback drops it. For in-memory copies of tables other than beliefs."""
        if self._depth:
            self._after_commit.append(action)
        else:
            action()

    def note_change(self, kind: str, key: str) -> None:
        """Tell the other replicas, at commit, that something they cache changed (personas,
        rules)."""
        self._changes.add((kind, key))

    def _feed_changes(self) -> set[tuple[str, str]]:
        return {("belief", belief_id) for belief_id in self._staged} | self._changes

    @property
    def load_pending(self) -> bool:
        """Opened with `background` and `load_in_background` not started yet."""
        return not self._loaded

    # -- rows as this transaction sees them ----------------------------------------------------

    def _select(self, where: str, params: Sequence[Any] = ()) -> list[Belief]:
        self.flush()
        rows = self.conn.execute(f"{SELECT_BELIEFS} {where}", list(params)).fetchall()
        return [belief_from_row(row) for row in rows]

    def _events(self, ids: Sequence[str]) -> dict[str, list[HistoryEvent]]:
        self.flush()
        rows = self.conn.execute(
            SELECT_EVENTS + " WHERE belief_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY seq",
            [list(ids)],
        ).fetchall()
        out: dict[str, list[HistoryEvent]] = {}
        for row in rows:
            belief_id, event = event_from_row(row)
            out.setdefault(belief_id, []).append(event)
        return out

    def _current(self, belief_id: str) -> Belief | None:
        """The row's state as this transaction sees it, from memory; None if there is none.

        Soft-deleted rows are read from the database (their rows may be edited directly).
        """
        if belief_id in self._staged:
            return self._staged[belief_id]
        found = self.index.get(belief_id)
        if found is not None or belief_id not in self._deleted_ids:
            return found
        rows = self._select("WHERE id = ?", [belief_id])
        return rows[0] if rows else None

    def _exists(self, belief_id: str) -> bool:
        if belief_id in self._staged:
            return self._staged[belief_id] is not None
        return belief_id in self._deleted_ids or self.index.record(belief_id) is not None

    def _require(self, belief_id: str) -> Belief:
        found = self._current(belief_id)
        if found is None:
            raise BeliefNotFound(
                f"no belief with id {belief_id!r}; `tenure beliefs list` shows ids"
            )
        return found

    def _named(self, user_id: str, canonical_name: str) -> list[Belief]:
        """The user's rows (not deleted) named `canonical_name`, as this transaction sees them."""
        found = {
            b.id: b
            for b in self.index.by_name(user_id, canonical_name)
            if b.canonical_name == canonical_name
        }
        for belief_id, belief in self._staged.items():
            found.pop(belief_id, None)
            if (
                belief is not None
                and belief.deleted_at is None
                and belief.user_id == user_id
                and belief.canonical_name == canonical_name
            ):
                found[belief_id] = belief
        return list(found.values())

    def _insert(self, belief: Belief) -> Belief:
        """Hold the new row for the commit; returns it as it will read back."""
        row = stored(belief)
        self._rows[row.id] = (True, row)
        self._staged[row.id] = row
        return row

    def _insert_many(self, beliefs: Sequence[Belief]) -> None:
        """Rows and their change_logs in two statements (row-by-row inserts are ~20x slower)."""
        if not beliefs:
            return
        self.flush()
        rows = [belief_params(b) for b in beliefs]
        self.bulk.insert("beliefs", BELIEF_COLUMNS, rows)
        events = [event_params(b.id, e) for b in beliefs for e in b.change_log]
        if events:
            self.bulk.insert("belief_events", EVENT_COLUMNS, events)
        if self.load_pending:  # the index's load, still to come, reads these rows
            return
        for belief in beliefs:
            self._staged[belief.id] = stored(belief)

    def _write(self, belief: Belief) -> Belief:
        """Hold the row's new state for the commit; returns it as it will read back."""
        row = stored(belief)
        held = self._rows.get(row.id)
        self._rows[row.id] = (held is not None and held[0], row)
        self._staged[row.id] = row
        return row

    def _event(self, belief_id: str, event: str, actor: str | None, detail: dict[str, Any]) -> None:
        entry = HistoryEvent(at=utcnow(), event=event, actor=actor, detail=detail)
        self._new_events.append(event_params(belief_id, entry))
