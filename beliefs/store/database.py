"""The DuckDB connection under the belief store: open/lock handling, transactions, row IO."""

from __future__ import annotations

import contextlib
import gc
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import duckdb

from beliefs.context.contested import OPEN_SQL, Contested
from beliefs.index.belief_index import BeliefIndex
from beliefs.model.errors import BeliefError, BeliefNotFound, StoreLocked
from beliefs.model.models import Belief, HistoryEvent, as_utc, utcnow
from beliefs.model.persona import Persona, PersonaSource
from beliefs.model.record import BeliefRecord
from beliefs.model.rules import RuleSet
from beliefs.store import migrations
from beliefs.store.connection import (
    DATABASE_ERRORS,
    Connection,
    PgConnection,
    Rows,
    is_postgres_url,
    location_name,
)
from beliefs.store.feed import CHANGE_FEED, ChangeFeed, new_replica_id
from beliefs.store.migrations import Migration, migrate, pending
from beliefs.store.rows import (
    BELIEF_COLUMNS,
    EVENT_COLUMNS,
    SELECT_BELIEFS,
    SELECT_EVENTS,
    UPDATE_BELIEF,
    belief_from_row,
    belief_params,
    event_from_row,
    event_params,
    record_from_row,
    stored,
    update_params,
)
from beliefs.store.rule_store import rule_set

LOAD_CHUNK = 20_000  # rows fetched and decoded at a time while the index fills
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
            for row in rows:
                belief = record_from_row(row)
                out[belief.user_id].append(belief)
        return out

    def close(self) -> None:
        with self._lock:
            self._cursor.close()


class BeliefDatabase:
    """One DuckDB connection; not thread-safe (the server routes calls through `StoreThread`).

    Writes made inside `transaction()` are staged and reach `index` (and the persona cache)
    only after the outermost commit. Belief rows, history events and other `defer`red writes
    are held in memory and written in a few multi-row statements just before that commit (or
    before any read of the database that must see them): single-row statements cost about a
    millisecond each, so a transaction of many small changes pays for few of them.
    """

    def __init__(self, conn: Connection, path: Path | str, *, read_only: bool) -> None:
        self.conn = conn
        self.path = path
        self.read_only = read_only
        self.index = BeliefIndex()
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
        self._types: dict[str, dict[str, str]] = {}
        self._staged_personas: dict[str, Persona] = {}
        self._personas: dict[str, Persona | None] = {}
        self.rules = RuleSet()
        self.contested = Contested()
        self._after_commit: list[Callable[[], None]] = []
        self._schemas: set[frozenset[str]] = set()
        self._loaded = False  # the index was filled, or its background load started
        # PostgreSQL only: this replica's place in the change feed, and the transaction's
        # changes other than rows and personas (the rules).
        self.feed: ChangeFeed | None = None
        self._changes: set[tuple[str, str]] = set()
        self._users: StoredUsers | None = None  # a bounded index's reader of other users

    # -- lifecycle -----------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        read_only: bool = False,
        background: bool = False,
        replica: str | None = None,
        bound: int = 0,
    ) -> Self:
        """Open (creating and migrating unless read-only) the database file at `path`, or the
        PostgreSQL database a `postgresql://` URL names.

        With `background` the index is left empty and not ready: the caller starts
        `load_in_background` when it is ready to share the processor with the load.
        With a `bound` (DuckDB only) the index holds about that many beliefs, whole users,
        the most recently active first, and reads others when they are asked for.

        Raises:
            StoreLocked: another process holds the file.
            BeliefError: the file is missing (read-only) or not a usable database.
        """
        conn: Connection
        if is_postgres_url(path):
            conn = PgConnection(str(path), read_only=read_only)
            path = location_name(path)
        else:
            path = Path(path).expanduser()
            if read_only and not path.exists():
                raise BeliefError(f"no belief database at {path}; import or create beliefs first")
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                conn = duckdb.connect(str(path), read_only=read_only)
            except duckdb.Error as exc:
                raise open_error(path, exc, read_only=read_only) from None
        try:
            conn.execute("SET TimeZone = 'UTC'")
            store = cls(conn, path, read_only=read_only)
            store.ensure_schema(migrations.MIGRATIONS)
            postgres = isinstance(conn, PgConnection)
            if postgres:
                if bound:
                    raise BeliefError(
                        f"an index bound ({bound:,} beliefs) needs a DuckDB store: a "
                        "PostgreSQL replica holds every belief; unset TENURE_INDEX_MAX_BELIEFS"
                    )
                store._follow(replica or new_replica_id())
            elif bound and isinstance(conn, duckdb.DuckDBPyConnection):
                store._users = StoredUsers(conn)
                store.index.source = store._users
                store.index.bound = bound
            store._load_personas()
            store.reload_contested()
            store.reload_rules()
            if background and not postgres:
                store.index.ready.clear()
            else:  # a PostgreSQL replica loads now, having joined the feed at its head (`_follow`)
                store.load_index(store.conn)
        except BaseException:
            conn.close()
            raise
        return store

    def close(self) -> None:
        if self._users is not None:
            self._users.close()
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
                    self._bulk("beliefs", BELIEF_COLUMNS, [belief_params(b) for b in inserts])
                if updates:
                    self._bulk_update(updates)
            if self._new_events:
                events, self._new_events = self._new_events, []
                self._bulk("belief_events", EVENT_COLUMNS, events)
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
            self._staged.clear()
            self._staged_personas.clear()
            self._rows.clear()
            self._new_events.clear()
            self._deferred.clear()
            self._changes.clear()
            self._after_commit.clear()
            self._depth = 0
            # A failed COMMIT has already ended the transaction.
            with contextlib.suppress(*DATABASE_ERRORS):
                self.conn.execute("ROLLBACK")
            raise
        self._depth = 0
        self._changes.clear()
        staged, self._staged = self._staged, {}
        personas, self._staged_personas = self._staged_personas, {}
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
        self._personas.update(personas)
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

    # -- loading the index ----------------------------------------------------------------------

    @property
    def load_pending(self) -> bool:
        """Opened with `background` and `load_in_background` not started yet."""
        return not self._loaded

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
                    for row in rows:
                        belief = record_from_row(row)
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
                for row in rows:
                    index.add_loaded(record_from_row(row))
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

    # -- replicas (PostgreSQL) -----------------------------------------------------------------

    def _follow(self, replica: str) -> None:
        """Join the change feed at its head, before the rows are loaded (see beliefs.store.feed)."""
        self.ensure_schema([CHANGE_FEED])
        self.feed = ChangeFeed(replica)
        self.feed.start_at_head(self)

    def try_lock(self, name: str) -> bool:
        """Hold `name` across replicas until `unlock` (True at once on DuckDB: one process)."""
        return self.conn.try_lock(name) if isinstance(self.conn, PgConnection) else True

    def unlock(self, name: str) -> None:
        if isinstance(self.conn, PgConnection):
            self.conn.unlock(name)

    def note_change(self, kind: str, key: str) -> None:
        """Tell the other replicas, at commit, that something they cache changed (rules)."""
        self._changes.add((kind, key))

    def _feed_changes(self) -> set[tuple[str, str]]:
        out = {("belief", belief_id) for belief_id in self._staged}
        out.update(("persona", user_id) for user_id in self._staged_personas)
        return out | self._changes

    def catch_up(self) -> int:
        """Apply other replicas' committed changes to the memory (store thread); 0 on DuckDB."""
        if self.feed is None or self._depth:
            return 0
        return self.feed.catch_up(self)

    def refresh_beliefs(self, ids: Sequence[str]) -> None:
        """Re-read the rows with these ids into the memory (another replica changed them)."""
        found = {
            b.id: b for b in self._select("WHERE id IN (SELECT unnest(?::VARCHAR[]))", [list(ids)])
        }
        for belief_id in ids:
            belief = found.get(belief_id)
            if belief is None:
                self.index.remove(belief_id)
                self._deleted_ids.discard(belief_id)
                continue
            self.index.upsert(belief)
            if belief.deleted_at is None:
                self._deleted_ids.discard(belief_id)
            else:
                self._deleted_ids.add(belief_id)
        self.reload_contested()

    def reload_contested(self) -> None:
        """Re-read the open contradictions (on open, and when other replicas changed beliefs:
        a conflict they opened or closed is announced as a change of its belief)."""
        self.contested.load(self.conn.execute(OPEN_SQL).fetchall())

    def refresh_personas(self, user_ids: Sequence[str]) -> None:
        for user_id in user_ids:
            self._personas.pop(user_id, None)
        self._load_personas("WHERE user_id IN (SELECT unnest(?::VARCHAR[]))", [list(user_ids)])

    # -- persona -------------------------------------------------------------------------------

    def get_persona(self, user_id: str) -> Persona | None:
        """From memory (all personas load on open): it is read on every proxied request."""
        return self._personas.get(user_id)

    def reload_rules(self) -> None:
        """Refresh the cached rules (after a rule write, or on open)."""
        self.rules = rule_set(self.conn)
        self.index.forget_derived()

    def _load_personas(self, where: str = "", params: Sequence[Any] = ()) -> None:
        rows = self.conn.execute(
            f"SELECT user_id, text, source, inputs_hash, updated_at FROM personas {where}",
            list(params),
        ).fetchall()
        for row in rows:
            self._personas[row[0]] = Persona(
                user_id=row[0],
                text=row[1],
                source=row[2],
                inputs_hash=row[3],
                updated_at=as_utc(row[4]),
            )

    def set_persona(
        self, user_id: str, text: str, *, source: PersonaSource, inputs_hash: str | None = None
    ) -> Persona:
        persona = Persona(user_id=user_id, text=text, source=source, inputs_hash=inputs_hash)
        self.set_personas([persona])
        return persona

    def set_personas(self, personas: Sequence[Persona]) -> None:
        """Store several users' personas in one statement (one user at most once)."""
        if not personas:
            return
        marks = ", ".join("(?, ?, ?, ?, ?)" for _ in personas)
        with self.transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO personas (user_id, text, source, inputs_hash, updated_at) "
                f"VALUES {marks}",
                [
                    value
                    for p in personas
                    for value in (p.user_id, p.text, p.source, p.inputs_hash, p.updated_at)
                ],
            )
            for persona in personas:
                self._staged_personas[persona.user_id] = persona

    # -- internals -----------------------------------------------------------------------------

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
        self._bulk("beliefs", BELIEF_COLUMNS, rows)
        events = [event_params(b.id, e) for b in beliefs for e in b.change_log]
        if events:
            self._bulk("belief_events", EVENT_COLUMNS, events)
        if self.load_pending:  # the index's load, still to come, reads these rows
            return
        for belief in beliefs:
            self._staged[belief.id] = stored(belief)

    def _columns(self, table: str) -> dict[str, str]:
        types = self._types.get(table)
        if types is None:
            types = self._types[table] = dict(
                self.conn.execute(
                    "SELECT column_name, data_type FROM information_schema.columns "
                    "WHERE table_name = ?",
                    [table],
                ).fetchall()
            )
        return types

    def _bulk(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        if isinstance(self.conn, PgConnection):
            self.conn.insert_rows(table, columns, rows)
            return
        quoted = ", ".join(f'"{c}"' for c in columns)
        if len(rows) == 1:
            marks = ", ".join("?" for _ in columns)
            self.conn.execute(f"INSERT INTO {table} ({quoted}) VALUES ({marks})", list(rows[0]))
            return
        types = self._columns(table)
        selects = ", ".join(f"unnest(${i}::{types[c]}[])" for i, c in enumerate(columns, 1))
        self.conn.execute(
            f"INSERT INTO {table} ({quoted}) SELECT {selects}",
            [list(values) for values in zip(*rows, strict=True)],
        )

    def _bulk_update(self, beliefs: Sequence[Belief]) -> None:
        if isinstance(self.conn, PgConnection):
            self.conn.update_rows(
                "beliefs", BELIEF_COLUMNS, "id", [belief_params(b) for b in beliefs]
            )
            return
        if len(beliefs) == 1:
            self.conn.execute(UPDATE_BELIEF, update_params(beliefs[0]))
            return
        types = self._columns("beliefs")
        selects = ", ".join(
            f'unnest(${i}::{types[c]}[]) AS "{c}"' for i, c in enumerate(BELIEF_COLUMNS, 1)
        )
        sets = ", ".join(f'"{c}" = v."{c}"' for c in BELIEF_COLUMNS if c != "id")
        rows = [belief_params(b) for b in beliefs]
        self.conn.execute(
            f"UPDATE beliefs SET {sets} FROM (SELECT {selects}) AS v WHERE beliefs.id = v.id",
            [list(values) for values in zip(*rows, strict=True)],
        )

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


_HOLDER = re.compile(r"Conflicting lock is held in (?P<program>.*?) \(PID (?P<pid>\d+)\)")
# "lock" as a word: a damaged file's message speaks of a "block" and is no lock
_LOCKED = re.compile(r"\block\b", re.IGNORECASE)
_DAMAGED = re.compile(r"corrupt|checksum|not a valid DuckDB database", re.IGNORECASE)


def open_error(path: Path, exc: duckdb.Error, *, read_only: bool) -> BeliefError:
    """Turn DuckDB's open failure into a message that names the holder and what to do."""
    text = str(exc)
    match = _HOLDER.search(text)
    if match is None and _DAMAGED.search(text):
        return BeliefError(
            f"the belief database {path} is damaged ({text}); move it aside and restore a "
            "copy, or start afresh and `tenure import` an export"
        )
    if match is None and not _LOCKED.search(text):
        return BeliefError(f"cannot open the belief database {path}: {text}")
    holder = f"process {match['pid']} ({match['program']})" if match else "another process"
    if read_only:
        hint = (
            "DuckDB lets readers share the file only with other readers, so while a Tenure "
            "server runs on this home use its API or UI, or stop it"
        )
    else:
        hint = (
            "a Tenure server is probably running on this home: stop it, or run the command "
            "while it runs — belief commands then go through its API; or use --read-only "
            "for reads when only readers hold the file"
        )
    return StoreLocked(f"the belief database {path} is locked by {holder}; {hint}")
