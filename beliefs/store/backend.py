"""What the store asks of either database: statements answer `Rows` to fetch; a PostgreSQL
database is named by a URL (`is_postgres_url`), shown without its password (`redacted`).

Apart from `beliefs.store.postgres` so that a DuckDB store never loads PostgreSQL's driver.
"""

from __future__ import annotations

import re
from typing import Any, Protocol, TypeGuard

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class Rows(Protocol):
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def fetchmany(self, size: int = ..., /) -> list[Any]: ...


def is_postgres_url(location: object) -> TypeGuard[str]:
    return isinstance(location, str) and location.startswith(POSTGRES_SCHEMES)


def redacted(url: str) -> str:
    """The URL without its password, for messages and /healthz."""
    return re.sub(r"(://[^:/@]+):[^@/]*@", r"\1:***@", url)
