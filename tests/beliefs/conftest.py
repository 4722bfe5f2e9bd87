"""A real DuckDB store in a temp dir for each test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from beliefs.store import BeliefStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "tenure.duckdb"


@pytest.fixture
def store(db_path: Path) -> Iterator[BeliefStore]:
    opened = BeliefStore.open(db_path)
    yield opened
    opened.close()
