"""Precision and recall of each matching mechanism on the blind-spot suite and the public one.

Mechanisms: `reference` (alias-weighted BM25 as the reference does it), `extended` (stems,
kind words of canonical names, corroborated everyday words), `semantic` (extended plus
embedding recall; needs the 'semantic' extra). Counted over belief ids in the relevant layer
of cases whose expectation is `shouldOnlyInclude`: precision = right / surfaced,
recall = right / expected.
Run: `.venv/bin/python bench/retrieval_quality.py [--public DIR] [--floor 0.5]`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from beliefs.evaluation import StoreEvalBackend, load_personas, run_cases, run_sessions
from beliefs.interchange import read_file
from beliefs.semantic import enable
from beliefs.store import BeliefStore

ROOT = Path(__file__).resolve().parent.parent
BLIND = ROOT / "tests" / "beliefs" / "blindspots"
PUBLIC = ROOT / ".." / "shared" / "conformance"


def run(beliefs: Path, cases: Path, sessions: Path | None, personas: dict[str, str], mode: str,
        floor: float) -> tuple[list[dict[str, object]], list[object]]:  # fmt: skip
    single = json.loads(cases.read_text())
    multi = json.loads(sessions.read_text()) if sessions else []
    with tempfile.TemporaryDirectory() as tmp, BeliefStore.open(Path(tmp) / "q.duckdb") as store:
        store.import_beliefs(read_file(str(beliefs)))
        store.index.reference_only = mode == "reference"
        if mode == "semantic":
            enable(store.index).floor = floor
        backend = StoreEvalBackend(store, personas)
        results = run_cases(backend, single) + run_sessions(backend, multi)
    specs = list(single) + [
        {**t, "caseId": f"{s['caseId']}#{t.get('turnIndex', 0)}"}
        for s in multi
        for t in s.get("turns", [])
    ]
    return specs, list(results)


def tally(specs: list[dict[str, object]], results: list[object]) -> dict[str, float]:
    right = surfaced = expected = passed = 0
    by_id = {r.case_id: r for r in results}  # type: ignore[attr-defined]
    for spec in specs:
        result = by_id[spec["caseId"]]
        passed += result.passed
        want_spec = (spec.get("expect") or {}).get("relevantBeliefs") or {}  # type: ignore[union-attr]
        if "shouldOnlyInclude" not in want_spec:
            continue
        want = set(want_spec["shouldOnlyInclude"])
        got = {h.belief.id for h in result.context.relevant}
        right += len(want & got)
        surfaced += len(got)
        expected += len(want)
    return {
        "precision": right / surfaced if surfaced else 1.0,
        "recall": right / expected if expected else 1.0,
        "passed": passed,
        "cases": len(specs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--public", type=Path, default=PUBLIC)
    parser.add_argument("--floor", type=float, default=None)
    parser.add_argument("--modes", default="reference,extended,semantic")
    args = parser.parse_args()
    from beliefs.semantic import FLOOR

    floor = FLOOR if args.floor is None else args.floor
    paper = args.public / "tenure-v1.0.0-paper"
    suites = [("blind-spot", BLIND / "beliefs.json", BLIND / "cases.json", None, {})]
    if paper.is_dir():
        personas = load_personas(json.loads((args.public / "persona.json").read_text()))
        suites.append(("public", paper / "beliefs.seed.json", paper / "retrieval.cases.json",
                       paper / "session-retrieval.cases.json", personas))  # fmt: skip
    print(f"{'suite':<11} {'mechanism':<10} {'precision':>9} {'recall':>7} {'cases passed':>13}")
    for name, beliefs, cases, sessions, personas in suites:
        for mode in args.modes.split(","):
            specs, results = run(beliefs, cases, sessions, personas, mode, floor)
            t = tally(specs, results)
            print(f"{name:<11} {mode:<10} {t['precision']:>9.3f} {t['recall']:>7.3f} "
                  f"{int(t['passed']):>6}/{int(t['cases'])}")  # fmt: skip
            if name == "blind-spot":
                failed = [r.case_id for r in results if not r.passed]  # type: ignore[attr-defined]
                print(f"{'':<22}failed: {', '.join(failed) or 'none'}")


if __name__ == "__main__":
    main()
