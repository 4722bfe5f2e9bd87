"""A document's passages change only by re-ingest: the extractor never sees them as beliefs a
turn may correct, and compaction never merges them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from beliefs.documents import MIGRATIONS, DocumentFile, ingest
from beliefs.model.models import Belief, utcnow
from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore
from compaction.clusters import examinable
from extractor.known import touched_beliefs
from extractor.turn import Turn

SECTION = "# Rollback\n\nRun kubectl argo rollouts undo api.\n\n"
TEXT = SECTION * 2  # the same passage twice: exact duplicates


@pytest.fixture
def store(tmp_path: Path) -> Iterator[BeliefStore]:
    with open_store(tmp_path / "m.duckdb") as opened:
        opened.ensure_schema(MIGRATIONS)
        ingest(opened, "u", "docs:runbooks", [DocumentFile("a.md", TEXT, "markdown", 9)], root="r")
        opened.create(
            Belief(user_id="u", canonical_name="rollback_policy", aliases=["rollback"],
                   content="Rollbacks need a ticket.", scope=["domain:docs/runbooks"])
        )  # fmt: skip
        yield opened


def test_the_extractor_is_shown_beliefs_never_passages(store: BeliefStore) -> None:
    passages = [b for b in store.list(user_id="u") if b.memory_class == "document"]
    ours = store.find_live("u", "rollback_policy")
    assert len(passages) == 2 and ours is not None
    turn = Turn(
        request_id="r1",
        user_id="u",
        scopes=["domain:docs/runbooks"],
        model="m",
        user_message="The rollback now needs two people.",
        injected_ids=[p.id for p in passages],
    )
    assert [b.canonical_name for b in touched_beliefs(store, turn)] == ["rollback_policy"]


def test_compaction_leaves_passages_alone(store: BeliefStore) -> None:
    now = utcnow()
    found = {b.canonical_name: examinable(b, now) for b in store.list(user_id="u")}
    assert found.pop("rollback_policy") is True
    assert set(found.values()) == {False}  # the two identical passages are never merged
