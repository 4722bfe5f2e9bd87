"""`tenure db copy` moves a whole home DuckDB -> PostgreSQL -> DuckDB without losing a row."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from beliefs.model.models import Belief
from beliefs.model.rules import Rule
from beliefs.opening import open_store
from beliefs.store.conflicts import record_conflict
from beliefs.store.rule_store import create_rule, delete_rule
from beliefs.store.transfer import differences
from extractor.jobs import JobQueue
from extractor.turn import Turn
from proxy.cli.db import ALL_TABLES
from proxy.gateway.injections import InjectionRecord, save_records
from tests.data import SAMPLE_BELIEFS as SEED
from tests.proxy.cli.test_cli_store import Run

EXPORT = ("export", "--include-superseded", "--include-deleted")


def _fill(home: Path) -> None:
    """Beyond the seed: an edit, a supersession, a deletion, rules, a persona, a job, an
    injection and a conflict, so every table holds rows."""
    with open_store(home / "tenure.duckdb") as store:
        for tables in ALL_TABLES:
            store.ensure_schema(tables)
        first = store.list()[0]
        store.update(first.id, {"content": "Edited before the move."}, reason="test")
        new = Belief(id="b-moved", user_id=first.user_id, canonical_name="moved", content="x")
        store.create(new)
        store.supersede("b-moved", new.model_copy(update={"id": "b-moved-2", "content": "y"}))
        store.soft_delete(store.list()[1].id)
        store.set_persona(first.user_id, "Prefers short answers.", source="operator")
        create_rule(store, Rule(id="r-move", pattern="domain:moving", bonus=0.5))
        delete_rule(store, "r-move")
        JobQueue(store).enqueue(Turn(request_id="req-1", user_id=first.user_id, model="m"))
        record_conflict(store, user_id=first.user_id, existing_id=first.id, reason="differs")
        record = InjectionRecord(
            request_id="req-1",
            created_at=datetime(2026, 3, 1, tzinfo=UTC),
            user_id=first.user_id,
            agent_id=None,
            scopes=("domain:code",),
            model="m",
            endpoint="chat",
            query="what queue?",
            layers={"relevant": [first.id]},
            persona=True,
            approx_tokens=12,
        )
        save_records(store, [record])


def test_a_home_goes_to_postgresql_and_back_unchanged(
    tmp_path: Path,
    pg_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = Run(capsys)
    first, second = tmp_path / "first", tmp_path / "second"
    monkeypatch.setenv("TENURE_HOME", str(first))
    run.ok("import", str(SEED))
    _fill(first)
    before = run.ok(*EXPORT)

    out = run.ok("db", "copy", str(first), pg_url)
    assert "verify: clean" in out and "belief_events" in out and "jobs 1" in out
    monkeypatch.setenv("TENURE_DATABASE_URL", pg_url)
    assert run.ok(*EXPORT) == before  # the same export, read from PostgreSQL
    assert run.ok("verify").startswith("ok")
    monkeypatch.delenv("TENURE_DATABASE_URL")

    assert "verify: clean" in run.ok("db", "copy", pg_url, str(second))
    monkeypatch.setenv("TENURE_HOME", str(second))
    assert run.ok(*EXPORT) == before
    with (
        open_store(first / "tenure.duckdb") as a,
        open_store(second / "tenure.duckdb") as b,
    ):
        assert differences(a, b) == []  # every table, row for row
        b.create(Belief(id="b-after", user_id="u", canonical_name="after", content="z"))
        history = b.history("b-after")  # new history numbers follow the copied ones
        assert [e.event for e in history] == ["created"]


def test_copy_refuses_a_destination_that_holds_data(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run = Run(capsys)
    monkeypatch.setenv("TENURE_HOME", str(tmp_path / "home"))
    run.ok("import", str(SEED))
    run.ok("db", "copy", str(tmp_path / "home"), pg_url)
    code, _out, err = run("db", "copy", str(tmp_path / "home"), pg_url)
    assert code == 1 and "beliefs: 20 rows" in err and "nothing is overwritten" in err


def test_one_row_is_one_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run = Run(capsys)
    for home in ("a", "b"):
        with open_store(tmp_path / home / "tenure.duckdb") as store:
            store.create(Belief(id=f"b-{home}", user_id="u", canonical_name=home, content="x"))
    monkeypatch.setenv("TENURE_HOME", str(tmp_path / "a"))
    code, _out, err = run("db", "copy", str(tmp_path / "a"), str(tmp_path / "b"))
    assert code == 1 and "beliefs: 1 row)" in err and "1 rows" not in err
