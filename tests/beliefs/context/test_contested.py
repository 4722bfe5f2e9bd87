"""Open contradictions kept in memory: only committed ones, and read back on open."""

from __future__ import annotations

from pathlib import Path

import pytest

from beliefs.model.models import Belief
from beliefs.opening import open_store
from beliefs.store.conflicts import record_conflict


def test_only_a_committed_contradiction_is_held_and_it_survives_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "tenure.duckdb"
    old = Belief(user_id="u", canonical_name="queue", content="Uses RabbitMQ.")
    proposed = Belief(user_id="u", canonical_name="queue", content="Uses Kafka.")
    with open_store(path) as store:
        store.create(old)
        with pytest.raises(RuntimeError), store.transaction():
            record_conflict(store, user_id="u", existing_id=old.id, reason="r", proposed=proposed)
            raise RuntimeError("the job's other writes failed")
        assert store.contested.of(old.id) == ()
        with store.transaction():
            record_conflict(store, user_id="u", existing_id=old.id, reason="r", proposed=proposed)
        assert [c.claim for c in store.contested.of(old.id)] == ["Uses Kafka."]
    with open_store(path) as reopened:
        assert [c.claim for c in reopened.contested.of(old.id)] == ["Uses Kafka."]
