"""Running a few lines of Python in a fresh interpreter: what a module imports or loads is
only seen where nothing has imported it before."""

from __future__ import annotations

import subprocess
import sys


def run_python(code: str, timeout: float = 120) -> str:
    """The standard output of `code` run by this interpreter in a child process."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=timeout
    )
    return out.stdout
