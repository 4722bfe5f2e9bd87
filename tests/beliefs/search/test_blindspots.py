"""The blind-spot suite: stems, kind words of canonical names and everyday words, judged on
three users' corpora with at least as many precision traps as recall cases."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from beliefs.evaluation import StoreEvalBackend, run_cases
from beliefs.opening import open_store
from beliefs.store.interchange import read_file

SUITE = Path(__file__).parent.parent / "blindspots"
CASES: list[dict[str, Any]] = json.loads((SUITE / "cases.json").read_text())


def results(tmp_path: Path, *, reference: bool) -> dict[str, list[str]]:
    with open_store(tmp_path / "suite.duckdb") as store:
        store.import_beliefs(read_file(str(SUITE / "beliefs.json")))
        store.index.reference_only = reference
        return {r.case_id: r.failures for r in run_cases(StoreEvalBackend(store), CASES)}


def test_the_suite_is_shaped_as_promised() -> None:
    labels = Counter(c["label"] for c in CASES)
    assert len(CASES) >= 40 and labels["precision"] >= labels["recall"]
    beliefs = json.loads((SUITE / "beliefs.json").read_text())
    assert len({b["user_id"] for b in beliefs}) == 3


def test_every_case_but_the_meaning_only_ones_passes(tmp_path: Path) -> None:
    failures = results(tmp_path, reference=False)
    meaning_only = {c["caseId"] for c in CASES if c["mechanism"] == "semantic"}
    broken = {cid: f for cid, f in failures.items() if f and cid not in meaning_only}
    assert broken == {}


@pytest.mark.parametrize("mechanism", ["stem", "name_word", "common_word", "other_user"])
def test_the_reference_misses_what_each_mechanism_adds(tmp_path: Path, mechanism: str) -> None:
    failures = results(tmp_path, reference=True)
    cases = [c["caseId"] for c in CASES if c["mechanism"] == mechanism]
    assert any(failures[cid] for cid in cases), f"the reference already passes every {mechanism}"


# Two more corpora, their cases written without regard to how the matching works.
HELD_OUT = [Path(__file__).parent.parent / f"heldout-{x}" for x in "cde"]


@pytest.mark.parametrize("suite", HELD_OUT, ids=lambda p: p.name)
def test_on_the_held_out_corpora_no_precision_case_is_lost_and_more_pass(
    tmp_path: Path, suite: Path
) -> None:
    cases: list[dict[str, Any]] = json.loads((suite / "cases.json").read_text())
    passed = {}
    for reference in (True, False):
        with open_store(tmp_path / f"{suite.name}-{reference}.duckdb") as store:
            store.import_beliefs(read_file(str(suite / "beliefs.json")))
            store.index.reference_only = reference
            passed[reference] = {
                r.case_id for r in run_cases(StoreEvalBackend(store), cases) if r.passed
            }
    precision = {c["caseId"] for c in cases if c["label"] == "precision"}
    assert (passed[True] & precision) <= passed[False]
    assert len(passed[False]) > len(passed[True])
