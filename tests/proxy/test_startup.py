"""Start-up does only what `/healthz` needs: the heavy libraries (the MCP SDK, LiteLLM, the
word lists) load after the app answers, not on the import of the app."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("mcp", "litellm", "wordfreq")


def test_importing_the_app_leaves_the_heavy_libraries_for_later() -> None:
    code = f"import sys, proxy.app\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == ""
