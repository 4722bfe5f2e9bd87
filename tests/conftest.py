"""Fixtures shared by every part's tests: no network lookups from LiteLLM, the stand-in
provider, a second process holding a database, and the public conformance suite."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True")  # no fetch at test time

from tests.fakes.upstream import FakeUpstream
from tests.postgres_server import PostgresServer, postgres_bin

# The public retrieval suite sits beside a checkout (it is not part of the project). Without it
# the conformance test skips, except in CI, where it must run.
CONFORMANCE = Path(__file__).resolve().parents[1].parent / "shared" / "conformance"

_HOLDER = """
import sys, duckdb
conn = duckdb.connect(sys.argv[1])
print("ready", flush=True)
sys.stdin.read()  # hold the lock until the test closes our stdin
"""


@pytest.fixture(scope="session")
def upstream_server() -> Iterator[FakeUpstream]:
    with FakeUpstream() as server:
        yield server


@pytest.fixture
def upstream(upstream_server: FakeUpstream) -> Iterator[FakeUpstream]:
    """The stand-in provider with no recorded requests and no scripted replies."""
    upstream_server.reset()
    yield upstream_server
    upstream_server.reset()


@pytest.fixture
def hold_database() -> Iterator[Callable[[Path], int]]:
    """Start a process that opens the DuckDB file for writing and keeps it; returns its PID."""
    procs: list[subprocess.Popen[str]] = []

    def hold(path: Path) -> int:
        path.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        return proc.pid

    yield hold
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)
        assert proc.stdout is not None
        proc.stdout.close()


@pytest.fixture(scope="session")
def conformance() -> Path:
    """The conformance suite's directory; skips without it (fails instead with CI=true)."""
    if (CONFORMANCE / "tenure-v1.0.0-paper" / "beliefs.seed.json").exists():
        return CONFORMANCE
    reason = f"conformance suite not found at {CONFORMANCE} (place it beside the checkout)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason}; CI=true requires it")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the session; skips without Debian's `postgresql` package
    (fails instead with CI=true, where `make test` installs it)."""
    bin_dir = postgres_bin()
    if bin_dir is None:
        reason = (
            "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/pg_ctl): "
            "apt-get install postgresql, or run `make postgresql` as root"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI=true requires it")
        pytest.skip(reason)
    server = PostgresServer(bin_dir).start()
    yield server
    server.stop()


@pytest.fixture
def pg_url(postgres: PostgresServer) -> str:
    """A fresh, empty schema on the session's server, as a TENURE_DATABASE_URL."""
    return postgres.new_schema()


@pytest.fixture(params=["duckdb", "postgresql"])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """Where a fresh store lives, on each backend: a DuckDB file, or a PostgreSQL URL."""
    if request.param == "duckdb":
        return tmp_path / "tenure.duckdb"
    url: str = request.getfixturevalue("pg_url")
    return url
