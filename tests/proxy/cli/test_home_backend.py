"""Where a home's memory is: `tenure serve` says it, and a shell of the home finds it or is told."""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy.cli.main import main
from tests.fakes.upstream import FakeUpstream
from tests.postgres_server import PostgresServer
from tests.proxy.cli.test_cli_server import start_tenure, stop_tenure


def test_serve_on_a_new_home_says_it_starts_an_empty_memory(
    tmp_path: Path, upstream_server: FakeUpstream
) -> None:
    proc, _ = start_tenure(tmp_path / "typo", upstream_server.url)
    said = stop_tenure(proc)
    assert f"data in {tmp_path / 'typo'}: a new, empty memory (TENURE_HOME held none)" in said
    proc, _ = start_tenure(tmp_path / "typo", upstream_server.url)
    assert "a new, empty memory" not in stop_tenure(proc)


def test_a_shell_without_the_url_is_sent_to_the_homes_postgresql(
    tmp_path: Path,
    postgres: PostgresServer,
    upstream_server: FakeUpstream,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = postgres.new_database()
    home = tmp_path / "home"
    monkeypatch.setenv("TENURE_HOME", str(home))
    monkeypatch.delenv("TENURE_DATABASE_URL", raising=False)
    proc, _ = start_tenure(home, upstream_server.url, TENURE_DATABASE_URL=url)
    try:
        # while the server runs, the shell uses that database through it
        assert main(["verify"]) == 0
        assert "using its API" in capsys.readouterr().err
    finally:
        said = stop_tenure(proc)
    assert f"database {url}" in said and "data in" not in said
    # stopped, the shell is told where the memory is, instead of reading an empty DuckDB file
    assert main(["verify"]) == 1
    err = capsys.readouterr().err
    assert f"the memory of {home} is in PostgreSQL ({url})" in err
    assert "set TENURE_DATABASE_URL" in err
    assert not (home / "tenure.duckdb").exists()
    monkeypatch.setenv("TENURE_DATABASE_URL", url)
    assert main(["verify"]) == 0
