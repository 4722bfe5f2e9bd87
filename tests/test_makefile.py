"""The README's `make serve` and `make test`, started at once in two shells, do not race."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# A stand-in for the interpreter: `-m venv DIR` makes DIR/bin/python at once and DIR/bin/pip
# only when the test says so, as a slow real venv does; pip records each call and any overlap.
FAKE_PYTHON = """#!/bin/sh
set -e
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin"
    cp "$0" "$3/bin/python"
    touch "$WORK/creating"
    while [ ! -e "$WORK/release" ]; do sleep 0.05; done
    cat > "$3/bin/pip" <<'PIP'
#!/bin/sh
mkdir "$WORK/pip-running" 2>/dev/null || echo overlap >> "$WORK/pip.log"
echo "$*" >> "$WORK/pip.log"
rmdir "$WORK/pip-running"
PIP
    chmod +x "$3/bin/pip"
fi
"""


def waiting_on_lock(lock: Path) -> int:
    """How many processes are running `flock` on `lock` (one holds it, the others wait)."""
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                words = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if words and words[0].endswith(b"flock") and str(lock).encode() in words:
                count += 1
    return count


@pytest.mark.skipif(shutil.which("flock") is None, reason="flock(1) is not installed")
def test_serve_and_test_started_together_share_one_venv(tmp_path: Path) -> None:
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "setup.py").write_text("", encoding="utf-8")
    fake = tmp_path / "fake-python"
    fake.write_text(FAKE_PYTHON, encoding="utf-8")
    fake.chmod(0o755)
    env = {**os.environ, "WORK": str(tmp_path)}

    def make(target: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            ["make", "-s", target, f"PYTHON={fake}"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )

    with make("install") as first:
        while not (tmp_path / "creating").exists():  # the venv is half made
            assert first.poll() is None, first.communicate()[0]
            time.sleep(0.05)
        with make("install-test") as second:
            # the second either fails at once (the race) or waits for the first's lock
            while second.poll() is None and waiting_on_lock(tmp_path / ".venv.lock") < 2:
                time.sleep(0.05)
            (tmp_path / "release").touch()
            second_out = second.communicate(timeout=120)[0].decode()
        first_out = first.communicate(timeout=120)[0].decode()
    assert first.returncode == 0, first_out
    assert second.returncode == 0, second_out
    calls = (tmp_path / "pip.log").read_text(encoding="utf-8").splitlines()
    assert "overlap" not in calls
    # the classic editable install: the default one prints setuptools' warning each time
    editable = "install --quiet --config-settings editable_mode=compat -e"
    assert f"{editable} .[test]" in calls and f"{editable} ." in calls
