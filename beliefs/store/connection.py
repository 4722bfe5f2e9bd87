"""Which database a store opens: a DuckDB file (the embedded default) or a PostgreSQL URL.

Both connections answer `execute(sql, params)` with rows to fetch, so the store, the other
packages' tables and the migrations run one set of statements on either.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard

import duckdb

from beliefs.model.errors import BeliefError, StoreLocked
from beliefs.store.backend import Rows, is_postgres_url, redacted

if TYPE_CHECKING:  # PostgreSQL's driver loads with the first PostgreSQL store (11 MB)
    from beliefs.store.postgres import PgConnection

_DRIVER = "psycopg"


class Connection(Protocol):
    def execute(self, sql: str, parameters: Any = ..., /) -> Rows: ...
    def close(self) -> None: ...


def database_errors() -> tuple[type[Exception], ...]:
    """What a failed statement raises, on either backend (PostgreSQL's driver raises nothing
    before it is loaded)."""
    driver = sys.modules.get(_DRIVER)
    return (duckdb.Error,) if driver is None else (duckdb.Error, driver.Error)


def is_postgres(conn: Connection) -> TypeGuard[PgConnection]:
    return getattr(conn, "dialect", "duckdb") == "postgresql"


def _outage(exc: BaseException) -> bool:
    if not type(exc).__module__.startswith(_DRIVER):  # no driver error before it is loaded
        return False
    from beliefs.store.postgres import is_outage

    return is_outage(exc)


def store_refused(exc: BaseException) -> bool:
    """The store could not take the work (disk full, file too large, unwritable, invalidated
    by an earlier I/O error; PostgreSQL away or dropping the connection) rather than the work
    being wrong: worth keeping and trying again."""
    if isinstance(exc, OSError | MemoryError) or _outage(exc):
        return True
    name = type(exc).__name__
    if name == "TransactionException":  # DuckDB: "Failed to commit: Could not write file …"
        return "commit" in str(exc).lower() or "write" in str(exc).lower()
    return name in ("IOException", "OutOfMemoryException", "FatalException", "InternalException")


def location_name(location: Path | str) -> Path | str:
    """How messages name the store: the file's path, or the URL without its password."""
    return redacted(location) if is_postgres_url(location) else Path(location).expanduser()


def connect(location: Path | str, *, read_only: bool) -> tuple[Connection, Path | str]:
    """The connection to the DuckDB file at `location` (created unless read-only) or to the
    PostgreSQL database a `postgresql://` URL names, and how messages name it.

    Raises:
        StoreLocked: another process holds the file.
        BeliefError: the file is missing (read-only) or not a usable database.
    """
    if is_postgres_url(location):
        from beliefs.store.postgres import PgConnection

        return PgConnection(str(location), read_only=read_only), location_name(location)
    path = Path(location).expanduser()
    if read_only and not path.exists():
        raise BeliefError(f"no belief database at {path}; import or create beliefs first")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as exc:
        raise open_error(path, exc, read_only=read_only) from None
    # DuckDB's allocator keeps the pages a query freed until its own threads purge them:
    # without them, reading every row at start-up left about 15 MB resident for good at 100k
    # beliefs. (Set, not given to `connect`: another connection to the file in this process
    # with other options would be refused.)
    conn.execute("SET allocator_background_threads = true")
    return conn, path


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


__all__ = [
    "Connection",
    "Rows",
    "connect",
    "database_errors",
    "is_postgres",
    "is_postgres_url",
    "location_name",
    "open_error",
    "redacted",
    "store_refused",
]
