"""Which database a store opens: a DuckDB file (the embedded default) or a PostgreSQL URL.

Both connections answer `execute(sql, params)` with rows to fetch, so the store, the other
packages' tables and the migrations run one set of statements on either.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import duckdb
import psycopg

from beliefs.store.postgres import PgConnection, Rows, is_outage, is_postgres_url, redacted

# What a failed statement raises, on either backend.
DATABASE_ERRORS: tuple[type[Exception], ...] = (duckdb.Error, psycopg.Error)


class Connection(Protocol):
    def execute(self, sql: str, parameters: Any = ..., /) -> Rows: ...
    def close(self) -> None: ...


def store_refused(exc: BaseException) -> bool:
    """The store could not take the work (disk full, file too large, unwritable, invalidated
    by an earlier I/O error; PostgreSQL away or dropping the connection) rather than the work
    being wrong: worth keeping and trying again."""
    if isinstance(exc, OSError | MemoryError) or is_outage(exc):
        return True
    name = type(exc).__name__
    if name == "TransactionException":  # DuckDB: "Failed to commit: Could not write file …"
        return "commit" in str(exc).lower() or "write" in str(exc).lower()
    return name in ("IOException", "OutOfMemoryException", "FatalException", "InternalException")


def location_name(location: Path | str) -> Path | str:
    """How messages name the store: the file's path, or the URL without its password."""
    return redacted(location) if is_postgres_url(location) else Path(location).expanduser()


__all__ = [
    "DATABASE_ERRORS",
    "Connection",
    "PgConnection",
    "Rows",
    "is_postgres_url",
    "location_name",
    "store_refused",
]
