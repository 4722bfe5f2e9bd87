"""A real store for each test, on each backend: a DuckDB file in a temp dir, and a fresh
schema on the session's PostgreSQL server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from beliefs.store import BeliefStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "tenure.duckdb"


@pytest.fixture
def store(store_location: Path | str) -> Iterator[BeliefStore]:
    opened = BeliefStore.open(store_location)
    yield opened
    opened.close()
