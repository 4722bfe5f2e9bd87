"""Which database a store opens: a DuckDB file (the embedded default) or a PostgreSQL URL.

Both connections answer `execute(sql, params)` with rows to fetch, so the store, the other
packages' tables and the migrations run one set of statements on either.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import duckdb
import psycopg

from beliefs.postgres import PgConnection, is_postgres_url, redacted

# What a failed statement raises, on either backend.
DATABASE_ERRORS: tuple[type[Exception], ...] = (duckdb.Error, psycopg.Error)


class Rows(Protocol):
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def fetchmany(self, size: int = ..., /) -> list[Any]: ...


class Connection(Protocol):
    def execute(self, sql: str, parameters: Any = ..., /) -> Rows: ...
    def close(self) -> None: ...


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
]
