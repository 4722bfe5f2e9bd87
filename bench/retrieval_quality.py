"""Precision and recall of each matching mechanism on every corpus, by split, and the public one.

Corpora (`bench.corpora`): the blind-spot suite, held-out A and B, and every `heldout-*`
directory, found by name; each is named with its split (training, development, test).
Mechanisms: `reference` (alias-weighted BM25 as the reference does it), `extended` (the rules,
the default: stems, kind words of canonical names, corroborated everyday words), `model` (the
relevance model, `relevance_model` on the index), `semantic:F` (the model plus embedding
neighbours at cosine >= F alone; needs the 'semantic' extra) and `agreed:F:A`
(neighbours at >= F alone, or >= A when the turn shares a telling word with the belief's own
text: what TENURE_SEMANTIC=1 runs; `:rank`, `:rare`, `:none` keep only some of its conditions).
`content` is lexical recall over the beliefs' own text instead: extended plus every belief
holding a rare telling word of the turn (the agreement rule with no embedding condition).
Counted over belief ids in the relevant layer of cases whose expectation is
`shouldOnlyInclude`: precision = right / surfaced, recall = right / expected. After the
corpora, cases passed by each case's `mechanism` field (the kind of case), per split.
Run: `.venv/bin/python bench/retrieval_quality.py [--public DIR] [--modes extended,model]
[--splits training,development,test]`.
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
from bench.corpora import ROOT, corpora

MODES = "reference,extended,model"
ALL_MODES = f"{MODES},content,semantic:{FLOOR},semantic:0.35,agreed:{FLOOR}:{AGREED_FLOOR}"
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
        store.index.relevance_model = kind not in ("reference", "extended")
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


Row = tuple[str, str, str, dict[str, float]]  # corpus, split, mode, tally


def by_kind(specs: Specs, results: list[object], into: dict[tuple[str, str], list[int]]) -> None:
    """Add each case's pass to its (split-less) `mechanism` tally: [passed, cases]."""
    by_id = {r.case_id: r for r in results}  # type: ignore[attr-defined]
    for spec in specs:
        kind = str(spec.get("mechanism", "-"))
        tally_ = into.setdefault((kind, ""), [0, 0])
        tally_[0] += by_id[spec["caseId"]].passed  # type: ignore[attr-defined]
        tally_[1] += 1


def questions_of(beliefs: list[Path]) -> set[str]:
    """The ids of the open questions among the beliefs files."""
    return {
        str(b["_id"])
        for path in beliefs
        for b in json.loads(path.read_text())
        if isinstance(b, dict) and b.get("type") == "open_question"
    }


def unreachable_only(specs: Specs, results: list[object], questions: set[str]) -> int:
    """Failed cases whose one fault is a belief the relevant layer never holds, expected in it:
    a pinned one (the pinned layer carries it into every prompt, so the turn has it) or an open
    question (never returned by search; pinned ones have their own layer). The judge, as the
    public suite's, reads `shouldOnlyInclude` from the relevant layer alone."""
    by_id = {r.case_id: r for r in results}  # type: ignore[attr-defined]
    count = 0
    for spec in specs:
        result = by_id[spec["caseId"]]
        want_spec = (spec.get("expect") or {}).get("relevantBeliefs") or {}  # type: ignore[union-attr]
        if result.passed or "shouldOnlyInclude" not in want_spec:
            continue
        never = {b.id for b in result.context.pinned} | questions
        want = set(want_spec["shouldOnlyInclude"])
        got = {h.belief.id for h in result.context.relevant}
        count += bool(want & never) and got == want - never
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--public", type=Path, default=PUBLIC)
    parser.add_argument("--modes", default=MODES, help=f"any of {ALL_MODES}")
    parser.add_argument("--splits", default="training,development,test")
    parser.add_argument("--failed", action="store_true", help="list the failed cases")
    args = parser.parse_args()
    modes = args.modes.split(",")
    splits = args.splits.split(",")
    encoder = None
    if any(m.startswith(("semantic", "agreed", "content")) for m in modes):
        from beliefs.index.encoder import load_encoder

        encoder = _Memo(load_encoder())  # once: each run embeds the same texts
    suites = [(c.name, c.split, list(c.beliefs), c.cases, None, {}) for c in corpora()
              if c.split in splits]  # fmt: skip
    paper = args.public / "tenure-v1.0.0-paper"
    if paper.is_dir():
        personas = load_personas(json.loads((args.public / "persona.json").read_text()))
        suites.append(("public", "public", [paper / "beliefs.seed.json"],
                       paper / "retrieval.cases.json", paper / "session-retrieval.cases.json",
                       personas))  # fmt: skip
    print(f"{'corpus':<11} {'split':<11} " + " ".join(f"{m[:22]:>22}" for m in modes))
    print(f"{'':<23}" + " ".join(f"{'P / R / passed':>22}" for _ in modes))
    kinds: dict[str, dict[str, dict[tuple[str, str], list[int]]]] = {}
    carried: dict[tuple[str, str], int] = {}  # (split, mode) -> failed only for `unreachable_only`
    for name, split, beliefs, cases, sessions, personas in suites:
        cells = []
        questions = questions_of(beliefs) if split != "public" else set()
        for mode in modes:
            specs, results = run(beliefs, cases, sessions, personas, mode, encoder)
            t = tally(specs, results)
            cells.append(
                f"{t['precision']:.3f} / {t['recall']:.3f} / {int(t['passed'])}/{int(t['cases'])}"
            )
            if split != "public":
                by_kind(specs, results, kinds.setdefault(split, {}).setdefault(mode, {}))
                failed_only = unreachable_only(specs, results, questions)
                carried[split, mode] = carried.get((split, mode), 0) + failed_only
            failed = [r.case_id for r in results if not r.passed]  # type: ignore[attr-defined]
            if args.failed and failed and mode != "reference":
                print(f"  {mode} failed: {', '.join(failed)}")
        print(f"{name:<11} {split:<11} " + " ".join(f"{c:>22}" for c in cells))
    if any(carried.values()):
        print("\nfailed only by expecting in the relevant layer a pinned belief (the pinned layer")
        print("carries it) or an open question (never searched): " + "; ".join(
            f"{split} {mode} {n}" for (split, mode), n in carried.items() if n
        ))  # fmt: skip
    for split, per_mode in kinds.items():
        print(f"\ncases passed by kind ({split}): " + ", ".join(modes))
        names = sorted({k for tallies in per_mode.values() for k, _ in tallies})
        for kind in names:
            row = [per_mode[m].get((kind, ""), [0, 0]) for m in modes]
            print(f"  {kind:<22} " + " ".join(f"{p:>4}/{c:<4}" for p, c in row))


if __name__ == "__main__":
    main()
