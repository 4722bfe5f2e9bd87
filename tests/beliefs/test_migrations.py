"""Numbered migrations: recorded, applied once, each in its own transaction."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from beliefs.model.errors import BeliefError
from beliefs.opening import open_store
from beliefs.store import migrations
from beliefs.store.migrations import Migration, applied, migrate


def test_fresh_database_gets_every_migration_once(tmp_path: Path) -> None:
    conn = duckdb.connect(str(tmp_path / "db.duckdb"))
    assert migrate(conn) == sorted(m.number for m in migrations.MIGRATIONS)
    assert migrate(conn) == []
    assert set(applied(conn)) == {m.number for m in migrations.MIGRATIONS}
    tables = {
        r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables").fetchall()
    }
    assert {"beliefs", "belief_events", "personas", "schema_migrations"} <= tables
    conn.close()


def test_appended_migration_applies_on_next_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "db.duckdb"
    open_store(path).close()
    extra = Migration(99, "notes", ("CREATE TABLE notes (id INTEGER)",))
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, extra])
    with open_store(path) as store:
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
    assert set(applied(conn)) == {m.number for m in migrations.MIGRATIONS if m is not broken}
    tables = {
        r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables").fetchall()
    }
    assert "half" not in tables
    conn.close()


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "tenure.duckdb"
    path.write_text("hello", encoding="utf-8")
    with pytest.raises(
        BeliefError, match=r"the belief database .* is damaged .*not a valid DuckDB"
    ):
        open_store(path)


def test_a_package_set_applies_once_through_ensure_schema(tmp_path: Path) -> None:
    notes = [Migration(97, "notes", ("CREATE TABLE notes (id INTEGER)",))]
    with open_store(tmp_path / "db.duckdb") as store:
        assert not store.has_table("notes")
        store.ensure_schema(notes)
        store.ensure_schema(notes)
        store.execute("INSERT INTO notes VALUES (1)")
        assert store.execute("SELECT count(*) FROM schema_migrations WHERE number = 97").fetchone()
    with open_store(tmp_path / "db.duckdb") as store:
        store.ensure_schema(notes)  # recorded: not run again (the table would clash)
        assert store.execute("SELECT count(*) FROM notes").fetchone() == (1,)


def test_a_number_taken_by_another_package_is_refused(tmp_path: Path) -> None:
    with open_store(tmp_path / "db.duckdb") as store:
        clash = [Migration(1, "someone else's tables", ("CREATE TABLE x (id INTEGER)",))]
        with pytest.raises(ValueError, match=r"migration 1 .* is already taken by 'beliefs core"):
            store.ensure_schema(clash)


def test_read_only_store_refuses_a_pending_package_set(tmp_path: Path) -> None:
    open_store(tmp_path / "db.duckdb").close()
    notes = [Migration(96, "notes", ("CREATE TABLE notes (id INTEGER)",))]
    upgrade = "needs a schema upgrade; run any command without"
    with (
        open_store(tmp_path / "db.duckdb", read_only=True) as store,
        pytest.raises(BeliefError, match=upgrade),
    ):
        store.ensure_schema(notes)
