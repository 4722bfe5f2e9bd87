"""`kill -9` of a real `tenure serve` mid-extraction: on restart the turn lands exactly once."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from beliefs.opening import open_store
from tests.extractor.fake_llm import extraction, new_belief
from tests.fakes.upstream import Chat, FakeUpstream, Recorded

REPO = Path(__file__).resolve().parents[3]


def is_extraction(rec: Recorded) -> bool:
    return isinstance(rec.json, dict) and "response_format" in rec.json


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for(check: Callable[[], bool], what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def serve(tmp_path: Path, upstream: FakeUpstream) -> Iterator[Callable[[], tuple[Any, str]]]:
    procs: list[subprocess.Popen[bytes]] = []
    port = free_port()
    env = {
        **os.environ,
        "TENURE_HOME": str(tmp_path / "home"),
        "TENURE_UPSTREAM_URL": upstream.url,
        "TENURE_PORT": str(port),
        "TENURE_EXTRACT_WORKERS": "1",
        "TENURE_LOG_LEVEL": "warning",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }

    def start() -> tuple[subprocess.Popen[bytes], str]:
        with (tmp_path / f"serve-{len(procs)}.log").open("wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "proxy.cli.main", "serve"],
                cwd=REPO,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        procs.append(proc)
        base = f"http://127.0.0.1:{port}"

        def up() -> bool:
            assert proc.poll() is None, (tmp_path / f"serve-{len(procs) - 1}.log").read_text()
            try:
                return httpx.get(f"{base}/healthz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(up, "the server to start")
        return proc, base

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(10)


def test_kill_9_mid_extraction_then_restart_writes_exactly_one_copy(
    serve: Callable[[], tuple[subprocess.Popen[bytes], str]],
    upstream: FakeUpstream,
    tmp_path: Path,
) -> None:
    reply = json.dumps(extraction(new_beliefs=[new_belief("cache_store", "Uses Redis.")]))
    # The first extraction reply is held long enough to kill the server while it waits.
    upstream.queue(Chat(content=reply, match=is_extraction, delay=60))
    proc, base = serve()
    response = httpx.post(
        f"{base}/v1/chat/completions",
        headers={"X-Tenure-User": "alice", "X-Tenure-Scope": "project:billing"},
        json={"model": "stand-in-model", "messages": [{"role": "user", "content": "Redis!"}]},
        timeout=10,
    )
    assert response.status_code == 200
    wait_for(lambda: any(is_extraction(r) for r in upstream.requests), "the extraction call")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)

    upstream.queue(Chat(content=reply, match=is_extraction))  # answered at once this time
    proc, base = serve()

    def done() -> bool:
        jobs = httpx.get(f"{base}/api/jobs", params={"status": "done"}, timeout=5).json()
        return len(jobs) == 1

    wait_for(done, "the job to finish after the restart", timeout=60)
    proc.terminate()
    proc.wait(10)

    with open_store(tmp_path / "home" / "tenure.duckdb", read_only=True) as store:
        beliefs = store.list(user_id="alice", include_superseded=True)
        assert [b.canonical_name for b in beliefs] == ["cache_store"]
        jobs = store.execute("SELECT status, attempts FROM jobs").fetchall()
        assert jobs == [("done", 2)]
    assert sum(1 for r in upstream.requests if is_extraction(r)) == 2
