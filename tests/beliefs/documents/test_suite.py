"""The passage-retrieval suite holds its floor: right passages found, traps find nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from beliefs.context.assembly import ContextRequest, covering
from beliefs.documents import MIGRATIONS, finder_for
from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore
from tests.beliefs.documents.suite import QUESTIONS, USER, load_corpus, run_suite

PRECISION_FLOOR = 0.8
RECALL_FLOOR = 0.9


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BeliefStore]:
    path = Path(tmp_path_factory.mktemp("suite")) / "memory.duckdb"
    with open_store(path) as opened:
        opened.ensure_schema(MIGRATIONS)
        load_corpus(opened)
        yield opened


def test_suite_has_forty_questions_half_of_them_traps() -> None:
    cases = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    assert len(cases) >= 40
    assert sum(1 for c in cases if not c["expect"]) >= len(cases) // 2


def test_suite_holds_its_floor(store: BeliefStore) -> None:
    score = run_suite(store)
    assert score.precision >= PRECISION_FLOOR, "\n".join(score.misses)
    assert score.recall >= RECALL_FLOOR, "\n".join(score.misses)


def test_no_trap_delivers_a_passage(store: BeliefStore) -> None:
    finder = finder_for(store)
    leaks = []
    for case in json.loads(QUESTIONS.read_text(encoding="utf-8")):
        if case["expect"]:
            continue
        scope = f"domain:docs/{case['scope']}"
        request = ContextRequest(user_id=USER, scopes=(scope,), query=case["q"])
        hits = finder.for_turn(request, lambda b: True, covering((scope,)))
        leaks.extend(f"{case['q']!r}: {h.belief.provenance['file']}" for h in hits)
    assert leaks == []
