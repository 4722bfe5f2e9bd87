"""LiteLLM is imported off the event loop: in a thread started at warm-up, never on the loop."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import asyncio, sys, threading

seen = []

class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "litellm":
            seen.append(threading.current_thread().name)
        return None

sys.meta_path.insert(0, Watch())

from extractor.llm import LiteLLMChatModel

async def main():
    llm = LiteLLMChatModel(api_base="http://127.0.0.1:9/v1")
    assert "litellm" not in sys.modules
    llm.warm_up()
    ticks = 0
    while not llm.library.ready:  # the loop keeps running while the import does
        ticks += 1
        await asyncio.sleep(0.01)
    module = await llm.library.get()
    print(seen[0], ticks > 0, module.suppress_debug_info)

asyncio.run(main())
"""


def test_the_import_runs_in_its_own_thread_while_the_loop_keeps_running() -> None:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["tenure-litellm-import", "True", "True"]


def test_nothing_but_the_llm_boundary_imports_litellm() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for package in ("beliefs", "extractor", "compaction", "proxy")
        for path in (ROOT / package).rglob("*.py")
        if path.name != "llm.py"
        and any(
            line.strip().startswith(("import litellm", "from litellm"))
            for line in path.read_text(encoding="utf-8").splitlines()
        )
    ]
    assert offenders == []
