"""`tenure context --json` says how each clause matched, through the real CLI and store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from beliefs.model.models import Belief
from beliefs.opening import open_store
from proxy.cli.main import main


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TENURE_HOME", str(tmp_path / "home"))
    with open_store(tmp_path / "home" / "tenure.duckdb") as store:
        for name, aliases, content in (
            ("backend_language_go", ["Go"], "Services are written in Go; the Go version is 1.22."),
            ("tracing_opentelemetry", ["tracing"], "Spans go to the collector."),
            ("database_postgres", ["Postgres"], "The primary database is Postgres."),
        ):
            store.create(Belief(user_id="u", canonical_name=name, aliases=aliases,
                                content=content, scope=["domain:code"]))  # fmt: skip
    return tmp_path / "home"


def clauses(capsys: pytest.CaptureFixture[str], query: str) -> dict[str, list[dict[str, object]]]:
    capsys.readouterr()
    code = main(["context", "--user", "u", "--scope", "domain:code", "--query", query, "--json"])
    out = capsys.readouterr().out
    assert code == 0
    return {b["canonical_name"]: b["clauses"] for b in json.loads(out)["relevant"]}


def test_each_clause_names_how_it_matched(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = clauses(capsys, "which go version, and why are traces missing from the database?")
    go = found["backend_language_go"][0]
    assert (go["match"], go["corroborated"]) == ("exact", "domain word 'version'")
    assert found["tracing_opentelemetry"][0]["match"] == "stemmed"
    assert found["database_postgres"][0]["match"] == "name_word"
    assert "corroborated" not in found["tracing_opentelemetry"][0]
    assert clauses(capsys, "let's go with the second approach") == {}
