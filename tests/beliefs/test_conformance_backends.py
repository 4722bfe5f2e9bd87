"""The public conformance suite on each backend: the seed is imported, the store reopened (so
the index is rebuilt from the rows the backend hands back), and every case must pass."""

from __future__ import annotations

import json
from pathlib import Path

from beliefs.evaluation import StoreEvalBackend, load_personas, run_cases, run_sessions
from beliefs.opening import open_store
from beliefs.store.interchange import read_file


def test_conformance_suite_passes_on_each_backend(
    store_location: Path | str, conformance: Path
) -> None:
    paper = conformance / "tenure-v1.0.0-paper"
    with open_store(store_location) as store:
        store.import_beliefs(read_file(str(paper / "beliefs.seed.json")))
    personas = load_personas(json.loads((conformance / "persona.json").read_text()))
    cases = json.loads((paper / "retrieval.cases.json").read_text())
    sessions = json.loads((paper / "session-retrieval.cases.json").read_text())
    with open_store(store_location) as store:
        assert store.verify() == []
        backend = StoreEvalBackend(store, personas)
        results = run_cases(backend, cases) + run_sessions(backend, sessions)
    failed = {r.case_id: r.failures for r in results if not r.passed}
    assert (len(results), failed) == (72, {})
