"""The DuckDB connection under the belief store: open/lock handling, transactions, row IO."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import duckdb

from beliefs.errors import BeliefError, BeliefNotFound, StoreLocked
from beliefs.index import BeliefIndex
from beliefs.migrations import migrate, pending
from beliefs.models import Belief, HistoryEvent, utcnow
from beliefs.persona import Persona, PersonaSource
from beliefs.rows import (
    BELIEF_COLUMNS,
    EVENT_COLUMNS,
    INSERT_BELIEF,
    INSERT_EVENT,
    SELECT_BELIEFS,
    SELECT_EVENTS,
    UPDATE_BELIEF,
    as_utc,
    belief_from_row,
    belief_params,
    event_from_row,
    event_params,
    update_params,
)
from beliefs.rule_store import rule_set
from beliefs.rules import RuleSet


class BeliefDatabase:
    """One DuckDB connection; not thread-safe (the server routes calls through `StoreThread`).

    Writes made inside `transaction()` are staged and reach `index` (and the persona cache)
    only after the outermost commit.
    """

    def __init__(self, conn: duckdb.DuckDBPyConnection, path: Path, *, read_only: bool) -> None:
        self.conn = conn
        self.path = path
        self.read_only = read_only
        self.index = BeliefIndex()
        self._depth = 0
        self._staged: dict[str, Belief | None] = {}
        self._staged_personas: dict[str, Persona] = {}
        self._personas: dict[str, Persona | None] = {}
        self.rules = RuleSet()

    # -- lifecycle -----------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | str, *, read_only: bool = False) -> Self:
        """Open (creating and migrating unless read-only) the database file at `path`.

        Raises:
            StoreLocked: another process holds the file.
            BeliefError: the file is missing (read-only) or not a usable database.
        """
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
            if read_only:
                if pending(conn):
                    raise BeliefError(
                        f"the database at {path} needs a schema upgrade; run any command "
                        "without --read-only once (with no server running) to apply it"
                    )
            else:
                migrate(conn)
            store = cls(conn, path, read_only=read_only)
            store.index.load(store._select("WHERE deleted_at IS NULL"))
            store._load_personas()
            store.reload_rules()
        except BaseException:
            conn.close()
            raise
        return store

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

    def execute(self, sql: str, params: Sequence[Any] = ()) -> duckdb.DuckDBPyConnection:
        """Run SQL on the store's connection (other parts' tables live in the same file)."""
        return self.conn.execute(sql, list(params))

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
            self.conn.execute("COMMIT")
        except BaseException:
            self._staged.clear()
            self._staged_personas.clear()
            self._depth = 0
            # A failed COMMIT has already ended the transaction.
            with contextlib.suppress(duckdb.Error):
                self.conn.execute("ROLLBACK")
            raise
        self._depth = 0
        staged, self._staged = self._staged, {}
        personas, self._staged_personas = self._staged_personas, {}
        for belief_id, belief in staged.items():
            if belief is None:
                self.index.remove(belief_id)
            else:
                self.index.upsert(belief)
        self._personas.update(personas)

    # -- persona -------------------------------------------------------------------------------

    def get_persona(self, user_id: str) -> Persona | None:
        """From memory (all personas load on open): it is read on every proxied request."""
        return self._personas.get(user_id)

    def reload_rules(self) -> None:
        """Refresh the cached rules (after a rule write, or on open)."""
        self.rules = rule_set(self.conn)
        self.index.derived.clear()

    def _load_personas(self) -> None:
        rows = self.conn.execute(
            "SELECT user_id, text, source, inputs_hash, updated_at FROM personas"
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
        with self.transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO personas (user_id, text, source, inputs_hash, updated_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [user_id, text, source, inputs_hash, persona.updated_at],
            )
            self._staged_personas[user_id] = persona
        return persona

    # -- internals -----------------------------------------------------------------------------

    def _select(self, where: str, params: Sequence[Any] = ()) -> list[Belief]:
        rows = self.conn.execute(f"{SELECT_BELIEFS} {where}", list(params)).fetchall()
        return [belief_from_row(row) for row in rows]

    def _events(self, ids: Sequence[str]) -> dict[str, list[HistoryEvent]]:
        rows = self.conn.execute(
            SELECT_EVENTS + " WHERE belief_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY seq",
            [list(ids)],
        ).fetchall()
        out: dict[str, list[HistoryEvent]] = {}
        for row in rows:
            belief_id, event = event_from_row(row)
            out.setdefault(belief_id, []).append(event)
        return out

    def _exists(self, belief_id: str) -> bool:
        row = self.conn.execute("SELECT count(*) FROM beliefs WHERE id = ?", [belief_id]).fetchone()
        return bool(row and row[0])

    def _require(self, belief_id: str) -> Belief:
        found = self._select("WHERE id = ?", [belief_id])
        if not found:
            raise BeliefNotFound(
                f"no belief with id {belief_id!r}; `tenure beliefs list` shows ids"
            )
        return found[0]

    def _insert(self, belief: Belief) -> None:
        self.conn.execute(INSERT_BELIEF, belief_params(belief))
        self._stage(belief)

    def _insert_many(self, beliefs: Sequence[Belief]) -> None:
        """Rows and their change_logs in two statements (row-by-row inserts are ~20x slower)."""
        if not beliefs:
            return
        rows = [belief_params(b) for b in beliefs]
        self._bulk("beliefs", BELIEF_COLUMNS, rows)
        events = [event_params(b.id, e) for b in beliefs for e in b.change_log]
        if events:
            self._bulk("belief_events", EVENT_COLUMNS, events)
        for belief in beliefs:
            self._stage(belief)

    def _bulk(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        types = dict(
            self.conn.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = ?",
                [table],
            ).fetchall()
        )
        selects = ", ".join(f"unnest(${i}::{types[c]}[])" for i, c in enumerate(columns, 1))
        quoted = ", ".join(f'"{c}"' for c in columns)
        self.conn.execute(
            f"INSERT INTO {table} ({quoted}) SELECT {selects}",
            [list(values) for values in zip(*rows, strict=True)],
        )

    def _write(self, belief: Belief) -> None:
        self.conn.execute(UPDATE_BELIEF, update_params(belief))
        self._stage(belief)

    def _stage(self, belief: Belief) -> None:
        self._staged[belief.id] = (
            None if belief.deleted_at is not None else belief.model_copy(update={"change_log": []})
        )

    def _event(self, belief_id: str, event: str, actor: str | None, detail: dict[str, Any]) -> None:
        entry = HistoryEvent(at=utcnow(), event=event, actor=actor, detail=detail)
        self.conn.execute(INSERT_EVENT, event_params(belief_id, entry))


_HOLDER = re.compile(r"Conflicting lock is held in (?P<program>.*?) \(PID (?P<pid>\d+)\)")


def open_error(path: Path, exc: duckdb.Error, *, read_only: bool) -> BeliefError:
    """Turn DuckDB's open failure into a message that names the holder and what to do."""
    text = str(exc)
    match = _HOLDER.search(text)
    if match is None and "lock" not in text.lower():
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
