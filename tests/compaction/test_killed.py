"""A run killed with SIGKILL between two clusters leaves a consistent store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from beliefs.opening import open_store
from compaction.runs import list_runs
from tests.compaction.conftest import USER, compact
from tests.compaction.test_conservative import two_clusters

REPO = Path(__file__).resolve().parents[2]

# The child runs compaction with a model that answers the first cluster with a merge and
# kills its own process (SIGKILL: no cleanup at all) when asked about the second.
CHILD = """
import json, os, signal, sys
from tests.compaction.conftest import compact, review
from beliefs.opening import open_store
from extractor.llm import ModelReply
from extractor.modes import ModeBook

first = json.loads(sys.argv[2])

class Killer:
    calls = 0
    modes = ModeBook()
    async def complete(self, call):
        Killer.calls += 1
        if Killer.calls > 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return ModelReply(text=json.dumps(review(merges=[{
            "belief_ids": first, "canonical_name": "postgres", "content": "Uses PostgreSQL.",
            "why_it_matters": "Write SQL for PostgreSQL.", "reason": "same database"}])))

store = open_store(sys.argv[1])
compact(store, Killer())
"""


def test_sigkill_mid_run_leaves_verify_clean(db_path: Path) -> None:
    import json

    with open_store(db_path) as store:
        first, second = two_clusters(store)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(db_path), json.dumps(first)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with open_store(db_path) as store:
        assert store.verify() == []
        live = {b.id for b in store.list(user_id=USER)}
        assert not live & set(first) and set(second) <= live
        [run] = list_runs(store)
        assert run.status == "running"
        compact(store)  # the next run marks the dead one interrupted
        assert [r.status for r in list_runs(store)] == ["done", "interrupted"]
        assert store.verify() == []
