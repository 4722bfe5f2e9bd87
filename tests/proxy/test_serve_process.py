"""`tenure serve` as its own process, and the CLI reading through its API meanwhile."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from beliefs.models import Belief
from beliefs.store import BeliefStore
from proxy.cli import main
from tests.fakes.upstream import FakeUpstream
from tests.proxy import beliefs_seed as seed

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(
    tmp_path: Path, upstream_server: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> Iterator[int]:
    home = tmp_path / "home"
    home.mkdir()
    with BeliefStore.open(home / "tenure.duckdb") as store:
        for belief in seed.ALL:
            store.create(belief)
        replacement = Belief(
            id="b-pg17", user_id=seed.USER, canonical_name="postgres_17", scope=["domain:code"]
        )
        store.supersede("b-postgres", replacement)
    port = free_port()
    env = {
        **os.environ,
        "TENURE_HOME": str(home),
        "TENURE_PORT": str(port),
        "TENURE_UPSTREAM_URL": upstream_server.url,
        "TENURE_EXTRACT_WORKERS": "0",
        "TENURE_LOG_LEVEL": "warning",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "proxy.cli", "serve"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(process.stderr.read().decode() if process.stderr else "")
            time.sleep(0.1)
        for key in ("TENURE_HOME", "TENURE_PORT"):
            monkeypatch.setenv(key, env[key])
        yield port
    finally:
        process.terminate()
        _out, err = process.communicate(timeout=15)
        assert b"Traceback" not in err, err.decode()


def test_cli_reads_through_the_api_while_serving(
    served: int, capsys: pytest.CaptureFixture[str]
) -> None:
    note = f"server running at http://127.0.0.1:{served}; using its API"

    assert main(["beliefs", "list", "--user", "alice", "--json"]) == 0
    out, err = capsys.readouterr()
    assert note in err
    assert sorted(b["id"] for b in json.loads(out)) == ["b-novel", "b-pg17", "b-tabs"]

    assert main(["beliefs", "show", "b-postgres", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["superseded_by"] == "b-pg17"
    assert main(["beliefs", "chain", "b-pg17"]) == 0
    out = capsys.readouterr().out
    assert out.index("b-postgres") < out.index("b-pg17")
    assert main(["beliefs", "history", "b-postgres", "--json"]) == 0
    events = [e["event"] for e in json.loads(capsys.readouterr().out)]
    assert events[0] == "created" and "superseded_by" in events
    assert main(["export", "--include-superseded"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5 and all(json.loads(line)["id"] for line in lines)

    assert main(["beliefs", "show", "b-missing"]) == 1
    err = capsys.readouterr().err
    assert "'b-missing'" in err and "Traceback" not in err


def test_second_server_on_the_same_data_says_it_is_locked(
    served: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--port", str(free_port())]) == 1
    err = capsys.readouterr().err
    assert "locked" in err and "Traceback" not in err


def test_served_proxy_answers(served: int, upstream_server: FakeUpstream) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "Which pg version?"}]}
    headers = {"X-Tenure-User": "alice", "X-Tenure-Scope": "domain:code"}
    resp = httpx.post(f"http://127.0.0.1:{served}/v1/chat/completions", json=body, headers=headers)
    assert resp.status_code == 200 and int(resp.headers["x-tenure-injected"]) >= 1
