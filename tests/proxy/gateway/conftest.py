"""A real store with the gateway's tables, for the tests of the gateway's writes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore
from proxy.gateway.tables import MIGRATIONS as GATEWAY_TABLES


@pytest.fixture
def store(tmp_path: Path) -> Iterator[BeliefStore]:
    with open_store(tmp_path / "turns.duckdb") as store:
        store.ensure_schema(GATEWAY_TABLES)
        yield store
