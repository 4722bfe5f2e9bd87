"""Numbered migrations: recorded, applied once, each in its own transaction."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from beliefs import migrations
from beliefs.errors import BeliefError
from beliefs.migrations import Migration, applied, migrate
from beliefs.store import BeliefStore


def test_fresh_database_gets_every_migration_once(tmp_path: Path) -> None:
    conn = duckdb.connect(str(tmp_path / "db.duckdb"))
    assert migrate(conn) == sorted(m.number for m in migrations.MIGRATIONS)
    assert migrate(conn) == []
    assert applied(conn) == {m.number for m in migrations.MIGRATIONS}
    tables = {
        r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables").fetchall()
    }
    assert {"beliefs", "belief_events", "personas", "schema_migrations"} <= tables
    conn.close()


def test_appended_migration_applies_on_next_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "db.duckdb"
    BeliefStore.open(path).close()
    extra = Migration(99, "notes", ("CREATE TABLE notes (id INTEGER)",))
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, extra])
    with BeliefStore.open(path) as store:
        assert store.execute("SELECT number FROM schema_migrations ORDER BY number").fetchall()[
            -1
        ] == (99,)
        store.execute("INSERT INTO notes VALUES (1)")


def test_failed_migration_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = Migration(98, "broken", ("CREATE TABLE half (id INTEGER)", "NOT SQL AT ALL"))
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, broken])
    conn = duckdb.connect(str(tmp_path / "db.duckdb"))
    with pytest.raises(duckdb.ParserException):
        migrate(conn)
    assert applied(conn) == {m.number for m in migrations.MIGRATIONS if m is not broken}
    tables = {
        r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables").fetchall()
    }
    assert "half" not in tables
    conn.close()


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "tenure.duckdb"
    path.write_text("hello", encoding="utf-8")
    with pytest.raises(BeliefError, match=r"cannot open the belief database .*not a valid DuckDB"):
        BeliefStore.open(path)
