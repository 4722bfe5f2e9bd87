"""Precision and recall of each matching mechanism on the blind-spot suite and the public one.

Mechanisms: `reference` (alias-weighted BM25 as the reference does it), `extended` (stems,
kind words of canonical names, corroborated everyday words), `semantic:F` (extended plus
embedding neighbours at cosine >= F alone; needs the 'semantic' extra) and `agreed:F:A`
(neighbours at >= F alone, or >= A when the turn shares a telling word with the belief's own
text: what TENURE_SEMANTIC=1 runs; `:rank`, `:rare`, `:none` keep only some of its conditions).
`content` is lexical recall over the beliefs' own text instead: extended plus every belief
holding a rare telling word of the turn (the agreement rule with no embedding condition).
Suites: the blind-spot suite, the held-out one (written
before any floor was chosen, on a corpus of its own beside the blind-spot one) and the public
one. Counted over belief ids in the relevant layer of cases whose expectation is
`shouldOnlyInclude`: precision = right / surfaced, recall = right / expected.
Run: `.venv/bin/python bench/retrieval_quality.py [--public DIR] [--modes reference,agreed]`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from beliefs.evaluation import StoreEvalBackend, load_personas, run_cases, run_sessions
from beliefs.index.semantic import AGREED_FLOOR, FLOOR, Encoder, enable
from beliefs.opening import open_store
from beliefs.store.interchange import read_file

ROOT = Path(__file__).resolve().parent.parent
BLIND = ROOT / "tests" / "beliefs" / "blindspots"
HELD_OUT = ROOT / "tests" / "beliefs" / "heldout"
HELD_OUT_C = ROOT / "tests" / "beliefs" / "heldout-c"
HELD_OUT_D = ROOT / "tests" / "beliefs" / "heldout-d"
HELD_OUT_E = ROOT / "tests" / "beliefs" / "heldout-e"
LATER = {letter: ROOT / "tests" / "beliefs" / f"heldout-{letter.lower()}" for letter in "FGHIJK"}
MODES = f"reference,extended,content,semantic:{FLOOR},semantic:0.35,agreed:{FLOOR}:{AGREED_FLOOR}"
PUBLIC = ROOT / ".." / "shared" / "conformance"


Specs = list[dict[str, object]]


def run(beliefs: list[Path], cases: Path, sessions: Path | None, personas: dict[str, str],
        mode: str, encoder: Encoder | None) -> tuple[Specs, list[object]]:  # fmt: skip
    single = json.loads(cases.read_text())
    multi = json.loads(sessions.read_text()) if sessions else []
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "q.duckdb") as store:
        for path in beliefs:
            store.import_beliefs(read_file(str(path)))
        kind, *floors = ("agreed:2:-1:rare" if mode == "content" else mode).split(":")
        store.index.reference_only = kind == "reference"
        if kind in ("semantic", "agreed"):
            semantic = enable(store.index, encoder)
            semantic.floor = float(floors[0])
            semantic.agreed_floor = float(floors[1]) if kind == "agreed" else None
            conditions = floors[2].split("+") if len(floors) > 2 else ["rank", "rare"]
            semantic.agreed_rank = semantic.agreed_rank if "rank" in conditions else None
            semantic.rare_share = semantic.rare_share if "rare" in conditions else None
        backend = StoreEvalBackend(store, personas)
        results = run_cases(backend, single) + run_sessions(backend, multi)
    specs = list(single) + [
        {**t, "caseId": f"{s['caseId']}#{t.get('turnIndex', 0)}"}
        for s in multi
        for t in s.get("turns", [])
    ]
    return specs, list(results)


class _Memo:
    """The encoder, each text embedded once across the runs."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self.vectors: dict[str, Any] = {}

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, self.encoder.encode(missing), strict=True))
        return np.stack([self.vectors[t] for t in texts])


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
    parser.add_argument("--modes", default=MODES)
    args = parser.parse_args()
    modes = args.modes.split(",")
    encoder = None
    if any(m.startswith(("semantic", "agreed", "content")) for m in modes):
        from beliefs.index.encoder import load_encoder

        encoder = _Memo(load_encoder())  # once: each run embeds the same texts
    paper = args.public / "tenure-v1.0.0-paper"
    suites = [
        ("blind-spot", [BLIND / "beliefs.json"], BLIND / "cases.json", None, {}),
        ("held-out A", [BLIND / "beliefs.json", HELD_OUT / "beliefs.json"],
         HELD_OUT / "cases.json", None, {}),
        ("held-out B", [HELD_OUT / "beliefs.json"], HELD_OUT / "cases-2.json", None, {}),
        ("held-out C", [HELD_OUT_C / "beliefs.json"], HELD_OUT_C / "cases.json", None, {}),
        ("held-out D", [HELD_OUT_D / "beliefs.json"], HELD_OUT_D / "cases.json", None, {}),
        ("held-out E", [HELD_OUT_E / "beliefs.json"], HELD_OUT_E / "cases.json", None, {}),
    ]  # fmt: skip
    suites += [(f"held-out {letter}", [path / "beliefs.json"], path / "cases.json", None, {})
               for letter, path in LATER.items()]  # fmt: skip
    if paper.is_dir():
        personas = load_personas(json.loads((args.public / "persona.json").read_text()))
        suites.append(("public", [paper / "beliefs.seed.json"], paper / "retrieval.cases.json",
                       paper / "session-retrieval.cases.json", personas))  # fmt: skip
    print(f"{'suite':<11} {'mechanism':<16} {'precision':>9} {'recall':>7} {'cases passed':>13}")
    for name, beliefs, cases, sessions, personas in suites:
        for mode in modes:
            specs, results = run(beliefs, cases, sessions, personas, mode, encoder)
            t = tally(specs, results)
            print(f"{name:<11} {mode:<16} {t['precision']:>9.3f} {t['recall']:>7.3f} "
                  f"{int(t['passed']):>6}/{int(t['cases'])}")  # fmt: skip
            failed = [r.case_id for r in results if not r.passed]  # type: ignore[attr-defined]
            if failed and mode != "reference":
                print(f"{'':<28}failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
