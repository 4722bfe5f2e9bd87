"""`tenure import` killed part way through a file it has been writing leaves the store as it was."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys
from pathlib import Path

from beliefs.opening import open_store
from beliefs.store.importer import IMPORT_BATCH
from beliefs.store.interchange import to_jsonl
from proxy.settings import Settings
from tests.beliefs.factory import belief

REPO = Path(__file__).resolve().parents[3]


def open_writer(fifo: Path, proc: subprocess.Popen[bytes]) -> int:
    """The FIFO's write end, once the import has opened its read end."""
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else proc.returncode
            continue
        os.set_blocking(fd, True)
        return fd


def test_an_import_killed_after_writing_batches_leaves_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    fifo = tmp_path / "beliefs.jsonl"
    os.mkfifo(fifo)
    env = {**os.environ, "TENURE_HOME": str(home)}
    entries = [belief(f"b{i}", f"name_{i}") for i in range(2 * IMPORT_BATCH + 1_000)]
    with (
        subprocess.Popen(
            [sys.executable, "-m", "proxy.cli.main", "import", str(fifo)],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        ) as proc,
        open(open_writer(fifo, proc), "w", encoding="utf-8") as pipe,
    ):
        for line in to_jsonl(entries):
            pipe.write(line + "\n")
        pipe.flush()
        # A write returns once the reader has taken all but a pipe's buffer (a few dozen
        # entries): the import has read, checked and written its first two batches.
        assert proc.poll() is None
        proc.kill()
        assert proc.wait() == -9
        with contextlib.suppress(BrokenPipeError):
            pipe.close()
    location = Settings.load(environ={"TENURE_HOME": str(home)}).store_location
    with open_store(location) as store:
        assert store.list(include_deleted=True, include_superseded=True) == []
        assert store.import_beliefs(entries[:10]) == 10
