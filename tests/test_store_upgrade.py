"""A store written by the numbered-migration release opens with today's code: its ledger is
rewritten by name once, nothing re-runs, its data is intact and a second open applies nothing.
The file is a fixture (tests/fixtures/stores/README.md says how it was made)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from beliefs.model.errors import BeliefError
from beliefs.opening import open_store
from beliefs.store.migrations import LEDGER_MIGRATION, NUMBERED, Migration, migrate
from beliefs.store.migrations import MIGRATIONS as BELIEFS
from beliefs.store.rule_store import load_rules
from compaction.migrations import MIGRATIONS as COMPACTION
from extractor.jobs import JobQueue
from extractor.migrations import MIGRATIONS as EXTRACTOR
from proxy.gateway.tables import MIGRATIONS as GATEWAY
from proxy.security.tables import MIGRATIONS as SECURITY
from proxy.security.tokens import list_tokens

FIXTURE = Path(__file__).parent / "fixtures" / "stores" / "numbered_ledger.duckdb"
PACKAGES: list[list[Migration]] = [BELIEFS, EXTRACTOR, COMPACTION, GATEWAY, SECURITY]
ALL_KEYS = {LEDGER_MIGRATION} | {m.key for ms in PACKAGES for m in ms}
TABLES = (
    "beliefs",
    "belief_events",
    "personas",
    "rules",
    "conflicts",
    "jobs",
    "injections",
    "chat_state",
    "mcp_calls",
    "turn_memory",
    "compaction_runs",
    "compaction_scopes",
    "access_secret",
    "access_events",
    "access_tokens",
)


# Columns this release adds to released tables (each with its default, checked below).
ADDED = {"beliefs": {"shared": False}}


def contents(conn: Any) -> dict[str, list[str]]:
    """Every row of every released table, in the columns the previous release wrote."""
    out = {}
    for table in TABLES:
        columns = [r[0] for r in conn.execute(f"SELECT * FROM {table} LIMIT 0").description]
        kept = [c for c in columns if c not in ADDED.get(table, {})]
        quoted = ", ".join('"' + c + '"' for c in kept)
        rows = conn.execute(f"SELECT {quoted} FROM {table}").fetchall()
        out[table] = sorted(repr(r) for r in rows)
    return out


def added(conn: Any) -> dict[str, set[object]]:
    """The values the added columns hold: only their defaults, on an upgraded store."""
    return {
        f"{table}.{column}": {
            r[0] for r in conn.execute(f"SELECT {column} FROM {table}").fetchall()
        }
        for table, columns in ADDED.items()
        for column in columns
    }


def ledger(conn: Any) -> dict[str, Any]:
    return dict(conn.execute("SELECT name, applied_at FROM schema_migrations").fetchall())


def test_the_fixture_is_a_numbered_store(tmp_path: Path) -> None:
    conn = duckdb.connect(str(FIXTURE), read_only=True)
    numbers = {r[0] for r in conn.execute("SELECT number FROM schema_migrations").fetchall()}
    conn.close()
    assert numbers == set(NUMBERED) - {100}  # the change feed exists only on PostgreSQL


def test_an_existing_store_upgrades_without_rerunning_anything(tmp_path: Path) -> None:
    path = tmp_path / "tenure.duckdb"
    shutil.copy(FIXTURE, path)
    old = duckdb.connect(str(path), read_only=True)
    old.execute("SET TimeZone = 'UTC'")  # as the store sets it, so times print alike
    before = contents(old)
    numbered = dict(old.execute("SELECT number, applied_at FROM schema_migrations").fetchall())
    old.close()

    with open_store(path) as store:
        for migrations in PACKAGES:
            store.ensure_schema(migrations)
        recorded = ledger(store.conn)
        assert set(recorded) == ALL_KEYS
        for number, at in numbered.items():
            assert recorded[NUMBERED[number]] == at  # carried over, not applied again
        assert contents(store.conn) == before
        assert added(store.conn) == {"beliefs.shared": {False}}
        assert store.verify() == []
        assert store.get("b-editor-2").content == "Uses neovim."
        assert [b.id for b in store.chain("b-editor-2")] == ["b-editor", "b-editor-2"]
        persona = store.get_persona("alice")
        assert persona is not None and persona.text == "Alice writes code in neovim."
        assert "project:fixture" in {r.pattern for r in load_rules(store.conn)}
        assert JobQueue(store).counts() == {"pending": 1, "running": 0, "done": 1, "failed": 0}
        assert [t.user_id for t in list_tokens(store)] == ["alice"]

    with open_store(path) as store:
        assert [migrate(store.conn, ms) for ms in PACKAGES] == [[]] * len(PACKAGES)
        assert ledger(store.conn) == recorded
        assert contents(store.conn) == before


def test_an_existing_store_opens_read_only_once_upgraded(tmp_path: Path) -> None:
    """This release adds a column, so a read-only open of the previous release's store says
    to open it once without --read-only; once upgraded, a read-only open reads it by name."""
    path = tmp_path / "tenure.duckdb"
    shutil.copy(FIXTURE, path)
    with pytest.raises(BeliefError, match="without --read-only once"):
        open_store(path, read_only=True)
    open_store(path).close()
    with open_store(path, read_only=True) as store:
        for migrations in PACKAGES:
            store.ensure_schema(migrations)
        assert store.get("b-tz").pinned
        assert "number" not in {
            r[0]
            for r in store.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'schema_migrations'"
            ).fetchall()
        }


def test_a_numbered_store_on_postgresql_upgrades_once(pg_url: str) -> None:
    """The same upgrade on PostgreSQL: a store given a numbered ledger (as the release wrote
    it) is rewritten by name, keeps its rows, and a second open applies nothing."""
    by_key = {key: number for number, key in NUMBERED.items()}
    with open_store(pg_url) as store:
        for migrations in PACKAGES:
            store.ensure_schema(migrations)
        store.set_persona("alice", "Alice writes code.", source="operator")
        rows = store.execute("SELECT name, applied_at FROM schema_migrations").fetchall()
        store.execute("DROP TABLE schema_migrations")
        store.execute(
            "CREATE TABLE schema_migrations (number INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
            "applied_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp)"
        )
        for name, at in rows:
            if name in by_key:  # newer migrations were never numbered: they apply again
                store.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?, ?)", [by_key[name], name, at]
                )
        numbered = dict(rows)
    with open_store(pg_url) as store:
        for migrations in PACKAGES:
            store.ensure_schema(migrations)
        recorded = ledger(store.conn)
        assert set(recorded) == ALL_KEYS | {"beliefs:change_feed"}
        assert all(recorded[k] == at for k, at in numbered.items() if k in by_key)
        assert store.verify() == []
        persona = store.get_persona("alice")
        assert persona is not None and persona.text == "Alice writes code."
    with open_store(pg_url) as store:
        assert [migrate(store.conn, ms) for ms in PACKAGES] == [[]] * len(PACKAGES)
        assert ledger(store.conn) == recorded
