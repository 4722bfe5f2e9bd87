from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore
from extractor.jobs import JobQueue
from extractor.turn import Turn

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "tenure.duckdb"


@pytest.fixture
def store(db_path: Path) -> Iterator[BeliefStore]:
    s = open_store(db_path)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def queue(store: BeliefStore) -> JobQueue:
    return JobQueue(store)


def make_turn(text: str = "We use the raw MongoDB driver, never Mongoose.", **kw: object) -> Turn:
    base: dict[str, object] = {
        "request_id": "req-1",
        "user_id": "alice",
        "agent_id": "cli",
        "scopes": ["project:billing"],
        "model": "small-model",
        "user_message": text,
        "assistant_message": "Understood.",
    }
    base.update(kw)
    return Turn.model_validate(base)
