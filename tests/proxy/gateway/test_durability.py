"""A turn the client received in full survives kill -9, and a full disk loses nothing it can keep.

Real `tenure serve` processes against the stand-in provider; the disk fills for real: the
server's file-size limit (RLIMIT_FSIZE) is lowered from outside with prlimit, so DuckDB's
writes fail with EFBIG exactly as on a full volume, and raised again to let them through.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from beliefs.opening import open_store
from bench.crash_turns import ROOT, Server, chat_then_kill, free_port, jobs_of
from proxy.gateway.forward import releasable
from tests.fakes.upstream import Chat, FakeUpstream


def test_a_reply_received_in_full_survives_kill_9_at_once(
    tmp_path: Path, upstream_server: FakeUpstream
) -> None:
    server = Server(tmp_path, free_port(), upstream_server.url)
    ids = []
    for shape in ("openai-json", "openai-sse", "anthropic-sse", "responses-json", "responses-sse"):
        server.start()
        request_id, complete = chat_then_kill(server, shape, f"{shape}: we deploy with Helm", 0)
        assert complete and request_id
        ids.append(request_id)
    server.start()  # each start writes what the previous kill left in the job journal
    server.stop()
    assert set(ids) <= jobs_of(tmp_path), "a turn the client received in full was lost"
    assert list((tmp_path / "journal").glob("jobs-*")) == []  # all in the table, none left


def test_a_reply_killed_at_any_moment_after_its_end_leaves_exactly_one_job(
    tmp_path: Path, upstream_server: FakeUpstream
) -> None:
    """Killed at once (the job only in the journal), a little later (maybe in both) and once
    the table has taken it: each start replays the journal, skipping what the table has."""
    server = Server(tmp_path, free_port(), upstream_server.url)
    ids = []
    for delay_ms in (0, 20, 60, 400):
        server.start()
        text = f"after {delay_ms} ms: we deploy with Helm"
        request_id, complete = chat_then_kill(server, "openai-sse", text, delay_ms)
        assert complete and request_id
        ids.append(request_id)
    server.start()
    server.stop()
    with open_store(tmp_path / "tenure.duckdb", read_only=True) as store:
        rows = store.execute("SELECT request_id, count(*) FROM jobs GROUP BY request_id")
        counts = dict(rows.fetchall())
    assert {request_id: counts.get(request_id, 0) for request_id in ids} == dict.fromkeys(ids, 1)


def test_the_end_of_a_stream_is_held_back_not_its_events() -> None:
    events = b'data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DONE]\n\n'
    assert events[: releasable(events)] == b'data: {"a":1}\n\ndata: {"b":2}\n\n'
    # A torn line waits for the rest; a marker inside content is content.
    assert releasable(b'data: {"a":1}\n\ndata: {"b"') == len(b'data: {"a":1}\n\n')
    text = b'data: {"c":"data: [DONE]"}\n\n'
    assert releasable(text) == len(text)
    anthropic = (
        b'event: message_delta\ndata: {}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    assert anthropic[: releasable(anthropic)] == b"event: message_delta\ndata: {}\n\n"


class _Lines:
    """A child's output, read in a thread (a pipe, not a file: the size limit spares pipes)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.text = ""
        assert proc.stdout is not None
        stream = proc.stdout
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def join(self) -> None:
        self._thread.join(5)

    def _read(self, stream: object) -> None:
        for line in iter(stream.readline, b""):  # type: ignore[attr-defined]
            self.text += line.decode("utf-8", "replace")


@pytest.fixture
def limited_server(
    tmp_path: Path, upstream_server: FakeUpstream
) -> Iterator[Callable[..., tuple[Server, _Lines]]]:
    """`tenure serve` that ignores SIGXFSZ, so a file-size limit makes writes fail with EFBIG
    (as a full disk does) instead of killing it."""
    started: list[tuple[Server, _Lines]] = []

    def start(**env: str) -> tuple[Server, _Lines]:
        server = Server(tmp_path / "home", free_port(), upstream_server.url)
        server.home.mkdir()
        variables = {
            "TENURE_HOME": str(server.home),
            "TENURE_PORT": str(server.port),
            "TENURE_UPSTREAM_URL": upstream_server.url,
            "TENURE_EXTRACT_WORKERS": "0",
            "TENURE_COMPACTION_INTERVAL": "0",
            "TENURE_LOG_LEVEL": "warning",
            "TENURE_DURABLE_WAIT_S": "2",
            **env,
        }
        launcher = (
            "import signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
            "sys.argv = ['tenure', 'serve']; from proxy.cli.main import main; main()"
        )
        server.proc = subprocess.Popen(
            [sys.executable, "-c", launcher],
            cwd=ROOT,
            env={**os.environ, **variables},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        lines = _Lines(server.proc)
        started.append((server, lines))
        server.wait_healthy()
        return server, lines

    yield start
    for server, lines in started:
        server.stop()
        lines.join()
        server.proc.stdout.close()  # type: ignore[union-attr]


def _chat(server: Server, text: str) -> httpx.Response:
    return httpx.post(
        f"{server.base}/v1/chat/completions",
        headers={"X-Tenure-User": "alice", "X-Tenure-Scope": "project:disk"},
        json={"model": "stand-in-model", "messages": [{"role": "user", "content": text}]},
        timeout=15,
    )


def test_a_full_disk_shows_in_healthz_and_the_turns_are_written_once_it_has_room(
    limited_server: Callable[..., tuple[Server, _Lines]], upstream_server: FakeUpstream
) -> None:
    server, lines = limited_server()
    assert server.proc is not None
    pid = server.proc.pid
    _soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    assert _chat(server, "before the disk fills").status_code == 200

    resource.prlimit(pid, resource.RLIMIT_FSIZE, (1, hard))  # no file may grow: a full disk
    ids = []
    for n in range(3):
        upstream_server.queue(Chat(content=f"reply {n}"))
        response = _chat(server, f"turn {n} while the disk is full")
        assert response.status_code == 200  # the client is served
        ids.append(response.headers["x-tenure-request-id"])
    health = httpx.get(f"{server.base}/healthz", timeout=5)
    assert health.status_code == 503
    body = health.json()
    assert body["status"] == "degraded"
    assert "File too large" in body["writes"]["reason"]
    assert body["writes"]["kept"] >= 3 and body["counters"]["writes_lost"] == 0
    assert any("refuses writes" in r for r in body["reasons"])
    # The jobs waiting in memory are the backlog too, though the table does not have them.
    assert body["jobs"]["pending"] >= 3 and body["jobs"]["in_memory"] >= 3

    resource.prlimit(pid, resource.RLIMIT_FSIZE, (hard, hard))  # room again
    deadline = time.monotonic() + 30
    while httpx.get(f"{server.base}/healthz", timeout=5).status_code != 200:
        assert time.monotonic() < deadline, "the kept writes were never written"
        time.sleep(0.2)
    server.stop()
    assert set(ids) <= jobs_of(server.home)  # nothing lost
    assert "the store refused" in lines.text and "File too large" in lines.text
    assert "Traceback" not in lines.text


def test_past_the_kept_bound_a_loss_is_counted_and_logged_loudly(
    limited_server: Callable[..., tuple[Server, _Lines]],
) -> None:
    server, lines = limited_server(TENURE_WRITE_KEEP_MAX="2")
    assert server.proc is not None
    _soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.prlimit(server.proc.pid, resource.RLIMIT_FSIZE, (1, hard))
    for n in range(4):
        assert _chat(server, f"turn {n} on a full disk").status_code == 200
    body = httpx.get(f"{server.base}/healthz", timeout=5).json()
    assert body["writes"]["kept"] == 2 and body["counters"]["writes_lost"] == 2
    assert body["counters"]["turns_not_durable"] == 4
    resource.prlimit(server.proc.pid, resource.RLIMIT_FSIZE, (hard, hard))
    server.stop()
    assert lines.text.count("LOST a job write") == 2
