"""Multi-row writes: one statement for many rows (single-row statements cost ~1 ms each)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from beliefs.model.models import Belief
from beliefs.store.connection import Connection, is_postgres
from beliefs.store.rows import BELIEF_COLUMNS, UPDATE_BELIEF, belief_params, update_params


class BulkWriter:
    """Inserts and updates of many rows on one connection, in as few statements as it takes.

    On DuckDB the rows go as one array per column (`unnest`), typed from the table's columns
    (read once per table); PostgreSQL has its own bulk paths (`PgConnection`).
    """

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._types: dict[str, dict[str, str]] = {}

    def columns(self, table: str) -> dict[str, str]:
        """The table's column types by name."""
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

    def insert(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        if is_postgres(self.conn):
            self.conn.insert_rows(table, columns, rows)
            return
        quoted = ", ".join(f'"{c}"' for c in columns)
        if len(rows) == 1:
            marks = ", ".join("?" for _ in columns)
            self.conn.execute(f"INSERT INTO {table} ({quoted}) VALUES ({marks})", list(rows[0]))
            return
        types = self.columns(table)
        selects = ", ".join(f"unnest(${i}::{types[c]}[])" for i, c in enumerate(columns, 1))
        self.conn.execute(
            f"INSERT INTO {table} ({quoted}) SELECT {selects}",
            [list(values) for values in zip(*rows, strict=True)],
        )

    def update_beliefs(self, beliefs: Sequence[Belief]) -> None:
        if is_postgres(self.conn):
            self.conn.update_rows(
                "beliefs", BELIEF_COLUMNS, "id", [belief_params(b) for b in beliefs]
            )
            return
        if len(beliefs) == 1:
            self.conn.execute(UPDATE_BELIEF, update_params(beliefs[0]))
            return
        types = self.columns("beliefs")
        selects = ", ".join(
            f'unnest(${i}::{types[c]}[]) AS "{c}"' for i, c in enumerate(BELIEF_COLUMNS, 1)
        )
        sets = ", ".join(f'"{c}" = v."{c}"' for c in BELIEF_COLUMNS if c != "id")
        rows = [belief_params(b) for b in beliefs]
        self.conn.execute(
            f"UPDATE beliefs SET {sets} FROM (SELECT {selects}) AS v WHERE beliefs.id = v.id",
            [list(values) for values in zip(*rows, strict=True)],
        )
