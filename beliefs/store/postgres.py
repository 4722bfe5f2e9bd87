"""PostgreSQL under the belief store: a pooled psycopg 3 connection that speaks the store's SQL.

The store's statements are written once, in the DuckDB dialect the embedded default uses;
`to_postgres` rewrites the few constructs where the dialects differ (placeholders, list
functions, `INSERT OR REPLACE`, a list-of-structs parameter, `DOUBLE`). Everything else —
transactions, row mapping, merge and supersession — is shared with DuckDB unchanged.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import psycopg
from psycopg.types.string import TextLoader
from psycopg_pool import ConnectionPool

from beliefs.model.errors import BeliefError
from beliefs.store.backend import Rows, redacted

# Advisory lock keys (any 64-bit numbers; the same in every process).
MIGRATION_LOCK = 0x7465_6E75_7265_0001
POOL_MAX = 4
# How long a unit of work waits for a connection: past it the store counts as away and the
# caller keeps the work for another try, rather than holding the store's thread longer.
CONNECT_WAIT_S = 2.0
AWAY_WAIT_S = 0.1
# The pool's own attempts back off exponentially without bound; given up after this long, the
# next unit of work starts a new attempt at once, so reconnecting follows the callers' retries.
RECONNECT_S = 5.0


class Translated(NamedTuple):
    sql: str
    # Placeholder positions whose list-of-rows parameter goes as JSON, with the field names.
    records: tuple[tuple[int, tuple[str, ...]], ...]


_QUOTED = re.compile(r"('(?:[^']|'')*'|\"[^\"]*\")")
_STRUCT = re.compile(
    r"\(\s*SELECT\s+unnest\(\?::STRUCT\((?P<fields>.*?)\)\[\]\)\s+AS\s+(?P<alias>\w+)\s*\)",
    re.I | re.S,
)
_LIST_FN = re.compile(
    r"\blist_(?P<fn>has_any|contains)\(\s*(?P<a>[^(),]+?)\s*,\s*(?P<b>[^(),]+?)\)"
)
_UPSERT = re.compile(
    r"^\s*INSERT\s+OR\s+REPLACE\s+INTO\s+(?P<table>\w+)\s*\((?P<cols>[^)]*)\)", re.I | re.S
)
_INSERT_INTO = re.compile(r"^\s*INSERT\s+(?:OR\s+REPLACE\s+)?INTO\s+(\w+)", re.I)
_DOUBLE = re.compile(r"\bDOUBLE\b(?!\s+PRECISION)", re.I)
_PLACEHOLDER = re.compile(r"\?|\$\d+")


def _list_fn(match: re.Match[str]) -> str:
    a, b = match["a"], match["b"]
    if match["fn"] == "has_any":
        return f"(CAST({a} AS text[]) && CAST({b} AS text[]))"
    return f"(CAST({a} AS text[]) @> ARRAY[CAST({b} AS text)])"


def _struct(match: re.Match[str], json_fields: frozenset[str]) -> str:
    fields = []
    for field in _split_fields(match["fields"]):
        name = field.split()[0]
        fields.append(f"{name} json" if name in json_fields else field.strip())
    return f"json_to_recordset(?::json) AS {match['alias']}({', '.join(fields)})"


@functools.lru_cache(maxsize=1024)
def to_postgres(
    sql: str, conflict_keys: tuple[str, ...] = (), json_fields: frozenset[str] = frozenset()
) -> Translated:
    """The statement in PostgreSQL's dialect with psycopg's `%s` placeholders.

    `conflict_keys` names the primary key an `INSERT OR REPLACE` replaces on; `json_fields`
    the fields of a list-of-structs parameter that go into JSON columns (their text is parsed:
    PostgreSQL does not assign text to a JSON column implicitly).
    """
    upsert = _UPSERT.match(sql)
    if upsert is not None:
        cols = [c.strip() for c in upsert["cols"].split(",")]
        sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in cols if c not in conflict_keys)
        sql = f"INSERT INTO {upsert['table']} ({upsert['cols']})" + sql[upsert.end() :]
        sql += f" ON CONFLICT ({', '.join(conflict_keys)}) DO UPDATE SET {sets}"
    parts = _QUOTED.split(sql)
    records: list[tuple[int, tuple[str, ...]]] = []
    seen = 0
    for i in range(1, len(parts), 2):  # psycopg reads `%` inside quotes too
        parts[i] = parts[i].replace("%", "%%")
    for i in range(0, len(parts), 2):  # the even parts are outside quotes
        text = parts[i].replace("%", "%%")
        text = _DOUBLE.sub("DOUBLE PRECISION", text)
        text = _LIST_FN.sub(_list_fn, text)
        for match in _STRUCT.finditer(text):
            before = len(_PLACEHOLDER.findall(text[: match.start()]))
            names = tuple(f.strip().split()[0] for f in _split_fields(match["fields"]))
            records.append((seen + before, names))
        text = _STRUCT.sub(lambda m: _struct(m, json_fields), text)
        seen += len(_PLACEHOLDER.findall(text))
        parts[i] = _PLACEHOLDER.sub("%s", text)
    return Translated("".join(parts), tuple(records))


def _split_fields(fields: str) -> list[str]:
    return [f for f in fields.split(",") if f.strip()]


def _as_records(value: Any, names: tuple[str, ...], json_fields: frozenset[str]) -> str:
    rows = [dict(v) if isinstance(v, dict) else dict(zip(names, v, strict=True)) for v in value]
    for row in rows:
        for name in json_fields.intersection(row):
            if isinstance(row[name], str):
                row[name] = json.loads(row[name])
    return json.dumps(rows, default=_json_default)


def _json_default(value: object) -> str:
    isoformat = getattr(value, "isoformat", None)
    return isoformat() if callable(isoformat) else str(value)


class PgConnection:
    """The DuckDB connection's calls the store uses, each unit of work on a pooled connection.

    A unit of work is a transaction (from `BEGIN TRANSACTION` to its `COMMIT` or `ROLLBACK`)
    or one statement outside a transaction. Each takes a connection from the pool, which checks
    it first, and gives it back at its end: a connection the server dropped (a restart,
    `pg_terminate_backend`, a network cut) fails only the unit of work it was in, and the next
    one gets a new connection as soon as the server answers again. A unit of work that finds no
    connection within `CONNECT_WAIT_S` fails with `psycopg.OperationalError`, which callers
    treat as the store being away (`is_outage`), never as bad data.

    Autocommit, so the store's own `BEGIN TRANSACTION` / `COMMIT` delimit transactions as they
    do on DuckDB. JSON columns read back as text, like DuckDB's.
    """

    dialect = "postgresql"

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        self.url = url
        try:
            # The pool retries a refused first connection until its timeout, then reports only
            # the timeout; one direct attempt names the cause (a wrong password, no such
            # database) at once.
            psycopg.connect(url, connect_timeout=10).close()
            self.pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
                url,
                min_size=1,
                max_size=POOL_MAX,
                kwargs={"autocommit": True},
                configure=_configure,
                check=ConnectionPool.check_connection,
                reconnect_timeout=RECONNECT_S,
                open=False,
            )
            self.pool.open(wait=True, timeout=10)
        except (psycopg.Error, Exception) as exc:
            raise BeliefError(
                f"cannot connect to the PostgreSQL database {redacted(url)}: "
                f"{str(exc).strip().replace(url, redacted(url))}; check "
                "TENURE_DATABASE_URL and that the server is running"
            ) from None
        self.read_only = read_only
        self._unit: psycopg.Connection[Any] | None = None  # the open transaction's connection
        self._away = False  # the last attempt to take a connection found none
        self._locks: dict[str, psycopg.Connection[Any]] = {}  # advisory lock -> its session
        self._keys: dict[str, tuple[str, ...]] = {}
        self._json: dict[str, frozenset[str]] = {}

    def _take(self) -> psycopg.Connection[Any]:
        # While the server is away every unit of work fails at once instead of holding the
        # store's thread (and everything queued behind it) for the full wait.
        wait = AWAY_WAIT_S if self._away else CONNECT_WAIT_S
        try:
            conn = self.pool.getconn(timeout=wait)
        except psycopg.OperationalError as exc:
            self._away = True
            raise psycopg.OperationalError(
                f"PostgreSQL at {redacted(self.url)} does not answer (no connection within "
                f"{wait:g} s); it is tried again"
            ) from exc
        self._away = False
        return conn

    @contextlib.contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The open transaction's connection, else one from the pool for this statement."""
        if self._unit is not None:
            yield self._unit
            return
        conn = self._take()
        try:
            yield conn
        finally:
            self.pool.putconn(conn)

    def execute(self, sql: str, parameters: Sequence[Any] | None = None) -> Rows:
        if sql == "BEGIN TRANSACTION" and self._unit is None:
            conn = self._take()
            try:
                cursor = conn.execute(b"BEGIN")
            except BaseException:
                self.pool.putconn(conn)
                raise
            self._unit = conn
            return cursor
        if sql in ("COMMIT", "ROLLBACK"):
            unit, self._unit = self._unit, None
            if unit is None:  # the transaction already ended with its connection
                return _NO_ROWS
            try:
                return unit.execute(sql.encode())
            finally:
                self.pool.putconn(unit)  # a broken one is discarded, an open transaction undone
        keys = self.primary_key(_UPSERT.match(sql)) if "OR REPLACE" in sql.upper() else ()
        target = _INSERT_INTO.match(sql) if "STRUCT(" in sql.upper() else None
        json_fields = self.json_columns(target[1]) if target else frozenset()
        statement, records = to_postgres(sql, keys, json_fields)
        params = list(parameters or ())  # never None: `%%` is then read as `%`
        for index, names in records:
            params[index] = _as_records(params[index], names, json_fields)
        with self._connection() as conn:
            return conn.execute(statement.encode(), params)

    def insert_rows(
        self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
    ) -> None:
        """Many rows in one pipelined batch (psycopg's executemany)."""
        quoted = ", ".join(f'"{c}"' for c in columns)
        marks = ", ".join("%s" for _ in columns)
        with self._connection() as conn, conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {table} ({quoted}) VALUES ({marks})".encode(), rows)

    def update_rows(
        self, table: str, columns: Sequence[str], key: str, rows: Sequence[Sequence[Any]]
    ) -> None:
        """Rows whose values are in `columns` order, matched on `key` (one of them)."""
        sets = ", ".join(f'"{c}" = %s' for c in columns if c != key)
        at = columns.index(key)
        params = [[*(v for i, v in enumerate(row) if i != at), row[at]] for row in rows]
        with self._connection() as conn, conn.cursor() as cur:
            cur.executemany(f'UPDATE {table} SET {sets} WHERE "{key}" = %s'.encode(), params)

    def json_columns(self, table: str) -> frozenset[str]:
        if table not in self._json:
            with self._connection() as conn:
                rows = conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                    "AND table_schema = current_schema() AND data_type IN ('json', 'jsonb')",
                    [table],
                ).fetchall()
            self._json[table] = frozenset(r[0] for r in rows)
        return self._json[table]

    def primary_key(self, upsert: re.Match[str] | None) -> tuple[str, ...]:
        if upsert is None:
            return ()
        table = upsert["table"]
        if table not in self._keys:
            with self._connection() as conn:
                rows = conn.execute(
                    "SELECT a.attname FROM pg_index i JOIN pg_attribute a "
                    "ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
                    "WHERE i.indrelid = %s::regclass AND i.indisprimary "
                    "ORDER BY array_position(i.indkey, a.attnum)",
                    [table],
                ).fetchall()
            self._keys[table] = tuple(r[0] for r in rows)
        return self._keys[table]

    def try_lock(self, name: str) -> bool:
        """A session advisory lock named `name`, if no other connection holds it; the
        connection holding it stays out of the pool until `unlock`."""
        if name in self._locks:
            return False
        conn = self._take()
        try:
            row = conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", [name]).fetchone()
        except BaseException:
            self.pool.putconn(conn)
            raise
        if not (row and row[0]):
            self.pool.putconn(conn)
            return False
        self._locks[name] = conn
        return True

    def unlock(self, name: str) -> None:
        conn = self._locks.pop(name, None)
        if conn is None:
            return
        try:  # a connection that dropped took its lock with it
            with contextlib.suppress(psycopg.OperationalError):
                conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", [name])
        finally:
            self.pool.putconn(conn)

    @contextlib.contextmanager
    def migration_lock(self) -> Iterator[None]:
        """One process at a time applies migrations (replicas may start together)."""
        with self.pool.connection(timeout=CONNECT_WAIT_S) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", [MIGRATION_LOCK])
            try:
                yield
            finally:
                with contextlib.suppress(psycopg.OperationalError):
                    conn.execute("SELECT pg_advisory_unlock(%s)", [MIGRATION_LOCK])

    def close(self) -> None:
        held = [conn for conn in (self._unit, *self._locks.values()) if conn is not None]
        self._unit, self._locks = None, {}
        try:
            for conn in held:
                self.pool.putconn(conn)
        finally:
            self.pool.close()


class _NoRows:
    """What ending a transaction whose connection is already gone returns."""

    def fetchone(self) -> Any:
        return None

    def fetchall(self) -> list[Any]:
        return []

    def fetchmany(self, size: int = 0, /) -> list[Any]:
        return []


_NO_ROWS = _NoRows()


def is_outage(exc: BaseException) -> bool:
    """The PostgreSQL server could not be reached or did not take the work (a dropped
    connection, a server restarting or shutting down, a full disk, a serialization conflict)
    rather than the statement being wrong: the work is to be kept and tried again."""
    return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)


def _configure(conn: psycopg.Connection[Any]) -> None:
    for name in ("json", "jsonb"):
        conn.adapters.register_loader(name, TextLoader)
    conn.execute("SET TimeZone = 'UTC'")
