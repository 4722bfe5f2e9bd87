"""A baseline tree for the benchmarks that compare this tree with another commit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


@contextmanager
def checked_out(ref: str) -> Iterator[Path]:
    """A detached checkout of `ref` in a temp dir, removed on exit (nothing is committed)."""
    where = Path(tempfile.mkdtemp(prefix="tenure-baseline-")) / "tree"
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(where), ref],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    if compiled(REPO):
        print(
            f"note: this tree's retrieval is compiled and {ref}'s checkout is not: the ratios "
            "count the compile too (`TENURE_COMPILE=0 make install` compares code with code)",
            file=sys.stderr,
        )
    try:
        yield where
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=REPO, check=False)
        shutil.rmtree(where.parent, ignore_errors=True)


def compiled(tree: Path) -> bool:
    """Whether `tree`'s retrieval modules are compiled (setup.py) beside their sources."""
    return any(any((tree / "beliefs" / "search").glob(f"*{s}")) for s in EXTENSION_SUFFIXES)


def run_in(tree: Path, script: str, *args: str, **env: str) -> dict[str, Any]:
    """`script` run by Python in `tree` (its packages first on the path); the JSON object it
    prints last."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree), **env},
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))
