"""Named migrations: recorded by `<package>:<name>`, applied once and in order, each in its own
transaction."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from beliefs.model.errors import BeliefError
from beliefs.opening import open_store
from beliefs.store import migrations
from beliefs.store.migrations import LEDGER_MIGRATION, Migration, applied, migrate


def keys(conn: duckdb.DuckDBPyConnection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM schema_migrations").fetchall()]


def test_fresh_database_gets_every_migration_once_by_name(tmp_path: Path) -> None:
    conn = duckdb.connect(str(tmp_path / "db.duckdb"))
    assert migrate(conn) == [
        "beliefs:core",
        "beliefs:conflicts",
        "beliefs:rules",
        "beliefs:add_belief_shared",
    ]
    assert migrate(conn) == []
    assert len(keys(conn)) == 5
    assert applied(conn) == {LEDGER_MIGRATION, *(m.key for m in migrations.MIGRATIONS)}
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
    extra = Migration("beliefs", "notes", ("CREATE TABLE notes (id INTEGER)",))
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, extra])
    with open_store(path) as store:
        recorded = store.execute("SELECT name FROM schema_migrations ORDER BY applied_at")
        assert recorded.fetchall()[-1] == ("beliefs:notes",)
        store.execute("INSERT INTO notes VALUES (1)")


def test_a_package_list_applies_in_its_order(tmp_path: Path) -> None:
    later = [
        Migration("notes", "create", ("CREATE TABLE notes (id INTEGER)",)),
        Migration("notes", "add_text", ("ALTER TABLE notes ADD COLUMN text VARCHAR",)),
    ]
    conn = duckdb.connect(str(tmp_path / "db.duckdb"))
    assert migrate(conn, later[:1]) == ["notes:create"]
    assert migrate(conn, later) == ["notes:add_text"]
    conn.execute("INSERT INTO notes VALUES (1, 'x')")
    conn.close()


def test_failed_migration_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = Migration("beliefs", "broken", ("CREATE TABLE half (id INTEGER)", "NOT SQL AT ALL"))
    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, broken])
    conn = duckdb.connect(str(tmp_path / "db.duckdb"))
    with pytest.raises(duckdb.ParserException):
        migrate(conn)
    assert "beliefs:broken" not in applied(conn)
    assert "beliefs:rules" in applied(conn)
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
    notes = [Migration("notes", "create", ("CREATE TABLE notes (id INTEGER)",))]
    with open_store(tmp_path / "db.duckdb") as store:
        assert not store.has_table("notes")
        store.ensure_schema(notes)
        store.ensure_schema(notes)
        store.execute("INSERT INTO notes VALUES (1)")
        count = "SELECT count(*) FROM schema_migrations WHERE name = 'notes:create'"
        assert store.execute(count).fetchone() == (1,)
    with open_store(tmp_path / "db.duckdb") as store:
        store.ensure_schema(notes)  # recorded: not run again (the table would clash)
        assert store.execute("SELECT count(*) FROM notes").fetchone() == (1,)


def test_one_name_is_one_migration_per_package(tmp_path: Path) -> None:
    """Packages may use the same name; one package may not use it twice."""
    conn = duckdb.connect(str(tmp_path / "db.duckdb"))
    migrate(conn)
    other = [Migration("notes", "core", ("CREATE TABLE notes (id INTEGER)",))]
    assert migrate(conn, other) == ["notes:core"]
    twice = [*other, Migration("notes", "core", ("CREATE TABLE more (id INTEGER)",))]
    with pytest.raises(ValueError, match="used twice: notes:core"):
        migrate(conn, twice)
    with pytest.raises(ValueError, match="lower_snake_case"):
        migrate(conn, [Migration("notes", "Add Column", ("SELECT 1",))])
    conn.close()


def test_read_only_store_refuses_a_pending_package_set(tmp_path: Path) -> None:
    open_store(tmp_path / "db.duckdb").close()
    notes = [Migration("notes", "create", ("CREATE TABLE notes (id INTEGER)",))]
    upgrade = "needs a schema upgrade; run any command without"
    with (
        open_store(tmp_path / "db.duckdb", read_only=True) as store,
        pytest.raises(BeliefError, match=upgrade),
    ):
        store.ensure_schema(notes)


def test_a_numbered_ledger_is_rewritten_by_name_once(tmp_path: Path) -> None:
    """The runner's own migration: each number becomes its name, with its time; a number no
    release used is kept, not dropped."""
    conn = duckdb.connect(str(tmp_path / "db.duckdb"))
    conn.execute(
        "CREATE TABLE schema_migrations (number INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
        "applied_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp)"
    )
    conn.execute(
        "INSERT INTO schema_migrations VALUES (1, 'beliefs core', '2024-01-02 03:04:05+00'), "
        "(77, 'an experiment', '2024-01-03 00:00:00+00')"
    )
    conn.execute(migrations.BELIEFS_CORE.statements[0])  # what number 1 made
    assert applied(conn) == {"beliefs:core", "numbered:77"}  # read by name before the rewrite
    assert migrate(conn) == ["beliefs:conflicts", "beliefs:rules", "beliefs:add_belief_shared"]
    rows = dict(conn.execute("SELECT name, applied_at::VARCHAR FROM schema_migrations").fetchall())
    assert rows["beliefs:core"].startswith("2024-01-02 03:04:05")
    assert rows["numbered:77"].startswith("2024-01-03")
    assert set(rows) == {LEDGER_MIGRATION, "numbered:77", *(m.key for m in migrations.MIGRATIONS)}
    assert migrate(conn) == []
    conn.close()
