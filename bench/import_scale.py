"""`tenure import` at scale: wall time and peak RSS of importing one JSONL file of synthetic
beliefs into an empty store, and into the store that import left (a second file of as many).

Each import runs `tenure import` in a process of its own, in this tree and, for the sizes in
`--baseline-sizes` (the code before batched imports held the whole file and store, ~13 GB at a
million), in a baseline tree checked out with `git worktree` at `--baseline`; ratios are this
tree / baseline. The corpus is `bench/corpus.py`'s, over `--users` users.
Target: 1,000,000 beliefs in one file within 10 minutes and under 4 GB.
Run: `.venv/bin/python bench/import_scale.py [--sizes 1000000] [--baseline-sizes 100000]`.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from beliefs.store.interchange import to_jsonl
from bench.corpus import iter_corpus
from bench.worktree import REPO, checked_out, run_in

# Run inside a tree: `tenure import FILE` in this process; prints its seconds and peak RSS.
MEASURE = """
import json, resource, sys, time
from proxy.cli.main import main
started = time.perf_counter()
code = main(["import", sys.argv[1]])
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"code": code, "seconds": seconds, "peak_mb": peak}))
"""


def write_file(path: Path, n: int, users: int, tag: str) -> None:
    """`n` beliefs; `tag` keeps a second file's ids and names apart from the first's."""
    beliefs = iter_corpus(n, users=users)
    if tag:
        beliefs = (
            b.model_copy(update={"id": b.id + tag, "canonical_name": b.canonical_name + tag})
            for b in beliefs
        )
    with path.open("w", encoding="utf-8") as out:
        for line in to_jsonl(beliefs):
            out.write(line + "\n")


def measure(tree: Path, home: Path, file: Path) -> dict[str, float]:
    result = run_in(tree, MEASURE, str(file), TENURE_HOME=str(home))
    if result["code"] != 0:
        raise SystemExit(f"tenure import failed in {tree}")
    return result


def run(tree: Path, files: tuple[Path, Path], scratch: Path) -> list[dict[str, float]]:
    home = scratch / "home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir()
    try:
        return [measure(tree, home, files[0]), measure(tree, home, files[1])]
    finally:
        shutil.rmtree(home, ignore_errors=True)


def report(n: int, label: str, runs: list[dict[str, float]]) -> None:
    for name, result in zip(("empty store", "second file"), runs, strict=True):
        rate = n / result["seconds"]
        print(
            f"  {n:>9,} {label:9} into {name:12} {result['seconds']:8.1f} s "
            f"{rate:9,.0f}/s  peak {result['peak_mb']:7,.0f} MB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--baseline-sizes", default="100000")
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--users", type=int, default=1000)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="tenure-import-"))
    try:
        with checked_out(args.baseline) as baseline:
            for n in (int(s) for s in args.sizes.split(",")):
                compare(n, args, scratch, baseline)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def compare(n: int, args: argparse.Namespace, scratch: Path, baseline: Path) -> None:
    files = (scratch / "a.jsonl", scratch / "b.jsonl")
    write_file(files[0], n, args.users, "")
    write_file(files[1], n, args.users, "_2")
    this = run(REPO, files, scratch)
    report(n, "this", this)
    if str(n) in args.baseline_sizes.split(","):
        base = run(baseline, files, scratch)
        report(n, "baseline", base)
        for name, a, b in zip(("empty", "second"), this, base, strict=True):
            print(
                f"  {n:>9,} this/baseline into {name}: time "
                f"{a['seconds'] / b['seconds']:.2f}, peak {a['peak_mb'] / b['peak_mb']:.2f}"
            )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
