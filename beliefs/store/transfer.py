"""Copy a whole store between databases (DuckDB <-> PostgreSQL), table by table, and prove it.

Every table both stores hold is copied row for row (beliefs with their history, rules, and the
other packages' tables: jobs, injections, conflicts, personas, …); the migration ledger stays
each side's own. The copy is one transaction on the destination, which must hold nothing of its
own yet, and is then compared with the source row for row.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from beliefs.model.errors import BeliefError
from beliefs.model.models import as_utc
from beliefs.store.database import BeliefDatabase
from beliefs.store.feed import FEED_TABLES

_LEDGER = "schema_migrations"
# Rows a migration itself adds (the default rules): a fresh destination has them, and they are
# replaced by the source's own.
_SEEDED = frozenset({"rules"})
_CHUNK = 1000
_SEQUENCE = re.compile(r"nextval\('(?P<name>[\w.\"]+)'")


def table_names(db: BeliefDatabase) -> list[str]:
    rows = db.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
        "AND table_type IN ('BASE TABLE') ORDER BY table_name"
    ).fetchall()
    # The ledger is each side's own; the change feed is the replicas' traffic, not the store.
    return [r[0] for r in rows if r[0] != _LEDGER and r[0] not in FEED_TABLES]


def columns_of(db: BeliefDatabase, table: str) -> list[tuple[str, str | None]]:
    """(name, default) per column, in table order."""
    rows = db.execute(
        "SELECT column_name, column_default FROM information_schema.columns "
        "WHERE table_name = ? AND table_schema = current_schema() ORDER BY ordinal_position",
        [table],
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def _count(db: BeliefDatabase, table: str) -> int:
    row = db.execute(f'SELECT count(*) FROM "{table}"').fetchone()
    return int(row[0]) if row else 0


def _rows(db: BeliefDatabase, table: str, columns: Sequence[str]) -> list[tuple[Any, ...]]:
    quoted = ", ".join(f'"{c}"' for c in columns)
    return [tuple(r) for r in db.execute(f'SELECT {quoted} FROM "{table}"').fetchall()]


def copy_store(source: BeliefDatabase, dest: BeliefDatabase) -> dict[str, int]:
    """Copy every table's rows from `source` into the empty `dest`; returns rows per table.

    Both must have the same packages' migrations applied (`ensure_schema` on each).

    Raises:
        BeliefError: the destination already holds data, or the two schemas differ.
    """
    tables = table_names(source)
    missing = sorted(set(tables) - set(table_names(dest)))
    if missing:
        raise BeliefError(
            f"the destination has no table(s) {', '.join(missing)}; both stores need the same "
            "version of Tenure"
        )
    held = [t for t in tables if t not in _SEEDED and _count(dest, t)]
    if held:
        listed = ", ".join(f"{t}: {_row_count(_count(dest, t))}" for t in held)
        raise BeliefError(
            f"the destination is not empty ({listed}); copy into a new database, or empty it "
            "first: nothing is overwritten"
        )
    counts: dict[str, int] = {}
    with dest.transaction():
        for table in tables:
            columns = [c for c, _ in columns_of(source, table)]
            if [c for c, _ in columns_of(dest, table)] != columns:
                raise BeliefError(f"table {table} has other columns in the destination")
            rows = _rows(source, table, columns)
            if table in _SEEDED:
                dest.execute(f'DELETE FROM "{table}"')
            for start in range(0, len(rows), _CHUNK):
                dest.bulk.insert(table, columns, rows[start : start + _CHUNK])
            counts[table] = len(rows)
        dest.flush()
    for table in tables:
        _advance_sequences(source, dest, table)
    return counts


def _advance_sequences(source: BeliefDatabase, dest: BeliefDatabase, table: str) -> None:
    """Numbers drawn from a sequence continue after the copied ones (history keeps its order)."""
    for column, default in columns_of(dest, table):
        match = _SEQUENCE.search(default or "")
        if match is None:
            continue
        row = dest.execute(f'SELECT max("{column}") FROM "{table}"').fetchone()
        top = int(row[0]) if row and row[0] is not None else 0
        name = match["name"]
        if getattr(dest.conn, "dialect", "duckdb") == "postgresql":
            dest.execute("SELECT setval(?, ?, true)", [name, max(top, 1)])
            continue
        current = dest.execute(f"SELECT nextval('{name}')").fetchone()
        need = top - (int(current[0]) if current else 0)
        if need > 0:
            dest.execute(f"SELECT max(nextval('{name}')) FROM range({need})")


def differences(source: BeliefDatabase, dest: BeliefDatabase) -> list[str]:
    """Tables whose rows differ between the stores (compared as values); empty when equal."""
    out = []
    for table in table_names(source):
        columns = [c for c, _ in columns_of(source, table)]
        a = sorted(_canonical(r) for r in _rows(source, table, columns))
        b = sorted(_canonical(r) for r in _rows(dest, table, columns))
        if a != b:
            out.append(
                f"{table}: {_row_count(len(a))} in the source, {len(b)} in the copy, or values "
                "differ"
            )
    return out


def _canonical(row: Sequence[Any]) -> str:
    return json.dumps([_value(v) for v in row], sort_keys=True, default=str)


def _value(value: Any) -> Any:
    if isinstance(value, datetime):
        return as_utc(value).isoformat()
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    if isinstance(value, list | tuple):
        return [_value(v) for v in value]
    return value


def _row_count(n: int) -> str:
    return f"{n} row" if n == 1 else f"{n} rows"
