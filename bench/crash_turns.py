"""kill -9 of a real `tenure serve`: is every turn the client received in full on disk?

For each moment — 0, 5, 10, 20, 50 ms after the client read a complete reply, and mid-stream
(after the first events of a slow stream) — and each wire shape (OpenAI JSON, OpenAI SSE,
Anthropic SSE), the script sends one chat request, kills the server with SIGKILL at that
moment, restarts it and looks for the turn's job by its request id. Complete replies must all
have a job (target 100 %); a mid-stream kill is reported as its own line (the client never got
the end of that reply, so nothing is promised; a job for it may or may not exist).

Then restart-to-healthy: 100 pending jobs, kill -9, and the time from starting the process to
the first 200 from /healthz (target <= 3 s), with the share spent importing LiteLLM measured
in a separate interpreter.

The stand-in provider is a real local HTTP server (`tests.fakes.upstream`) in a subprocess.
Run: `.venv/bin/python bench/crash_turns.py [--runs 10] [--port 5900]`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from beliefs.opening import open_store  # noqa: E402
from extractor.jobs import JobQueue  # noqa: E402
from extractor.turn import Turn  # noqa: E402

DELAYS_MS = (0, 5, 10, 20, 50)
SHAPES = ("openai-json", "openai-sse", "anthropic-sse", "responses-json", "responses-sse")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def stand_in_provider() -> Iterator[str]:
    """The fake provider in its own process; yields its base URL (…/v1)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.upstream"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(10)


@dataclass
class Server:
    """`tenure serve` as a child process on `port`, data in `home`."""

    home: Path
    port: int
    upstream: str
    extra_env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, *, wait: bool = True) -> float:
        """Start and (with `wait`) block until /healthz answers 200; returns seconds taken."""
        env = {
            **os.environ,
            "TENURE_HOME": str(self.home),
            "TENURE_PORT": str(self.port),
            "TENURE_UPSTREAM_URL": self.upstream,
            "TENURE_EXTRACT_WORKERS": "0",
            "TENURE_COMPACTION_INTERVAL": "0",
            "TENURE_LOG_LEVEL": "warning",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            **self.extra_env,
        }
        began = time.monotonic()
        log = (self.home / "serve.log").open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "proxy.cli.main", "serve"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        if wait:
            self.wait_healthy()
        return time.monotonic() - began

    def wait_healthy(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError((self.home / "serve.log").read_text()[-3000:])
            try:
                if httpx.get(f"{self.base}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.01)
        raise RuntimeError("the server did not become healthy")

    def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(15)


def _request(shape: str, text: str) -> tuple[str, dict[str, object]]:
    if shape.startswith("responses"):
        return "responses", {
            "model": "stand-in-model",
            "input": text,
            "stream": shape.endswith("sse"),
        }
    anthropic = shape.startswith("anthropic")
    body: dict[str, object] = {
        "model": "stand-in-model",
        "messages": [{"role": "user", "content": text}],
        "stream": shape.endswith("sse"),
    }
    if anthropic:
        body["max_tokens"] = 64
    return ("messages" if anthropic else "chat/completions"), body


def chat_then_kill(
    server: Server, shape: str, text: str, delay_ms: float | None
) -> tuple[str, bool]:
    """One request; kill `delay_ms` after the complete reply (None: mid-stream, after the
    first event). Returns (request id, whether the client received the reply in full)."""
    path, body = _request(shape, text)
    headers = {"X-Tenure-User": "crash", "X-Tenure-Scope": "project:crash"}
    complete = False
    with httpx.stream(
        "POST", f"{server.base}/v1/{path}", json=body, headers=headers, timeout=10
    ) as response:
        request_id = response.headers.get("x-tenure-request-id", "")
        if delay_ms is None:
            for _ in response.iter_raw():
                server.kill()  # the first bytes are here: the reply is mid-stream
                break
            return request_id, False
        data = response.read()
        complete = response.status_code == 200 and _complete(shape, data)
    if delay_ms:
        time.sleep(delay_ms / 1000)
    server.kill()
    return request_id, complete


def _complete(shape: str, data: bytes) -> bool:
    if shape == "openai-json":
        return bool(json.loads(data).get("choices"))
    if shape == "openai-sse":
        return b"data: [DONE]" in data
    if shape == "responses-json":
        return json.loads(data).get("status") == "completed"
    if shape == "responses-sse":
        return b"response.completed" in data
    return b"message_stop" in data


def jobs_of(home: Path) -> set[str]:
    """Request ids with a job in the (closed) database. Jobs still in the job journal of a
    killed server are not there until a server starts on the home again."""
    with open_store(home / "tenure.duckdb", read_only=True) as store:
        rows = store.execute("SELECT request_id FROM jobs").fetchall()
    return {row[0] for row in rows}


def crash_round(
    server: Server, shape: str, delay_ms: float | None, runs: int
) -> tuple[int, int, int]:
    """(replies received in full, of those with a job, mid-stream requests with a job)."""
    full = written = partial_written = 0
    sent = []
    for n in range(runs):
        server.start()  # replays the journal the previous kill left
        moment = "mid" if delay_ms is None else f"{delay_ms:g}ms"
        sent.append(chat_then_kill(server, shape, f"{shape} {moment} run {n}", delay_ms))
    server.start()  # the last kill's journal too
    server.stop()
    stored = jobs_of(server.home)
    for request_id, complete in sent:
        if complete:
            full += 1
            written += request_id in stored
        else:
            partial_written += request_id in stored
    return full, written, partial_written


def restart_to_healthy(server: Server, pending: int) -> tuple[float, float, float]:
    """Seconds from process start to /healthz 200 after a kill -9 with `pending` jobs, with
    the extraction workers on and off; and seconds `import litellm` takes in a fresh
    interpreter (the workers import it when they take the first job)."""
    server.start()
    server.kill()
    with open_store(server.home / "tenure.duckdb") as store:
        JobQueue(store).enqueue_many(
            [
                Turn(
                    request_id=f"r-pending-{i}",
                    user_id="crash",
                    scopes=["project:crash"],
                    model="stand-in-model",
                    user_message=f"pending turn {i}: we deploy with Helm",
                    assistant_message="Noted.",
                )
                for i in range(pending)
            ]
        )
    server.start()
    chat_then_kill(server, "openai-json", "one more turn, then kill -9", 0)
    server.extra_env = {"TENURE_EXTRACT_WORKERS": "1"}
    took = server.start()
    server.kill()
    server.extra_env = {"TENURE_EXTRACT_WORKERS": "0"}
    without = server.start()
    server.stop()
    began = time.monotonic()
    subprocess.run(
        [sys.executable, "-c", "import litellm"],
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        check=True,
    )
    return took, without, time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--port", type=int, default=0, help="server port (default: any free)")
    parser.add_argument("--pending", type=int, default=100)
    args = parser.parse_args()
    with stand_in_provider() as upstream, tempfile.TemporaryDirectory() as tmp:
        total_full = total_written = 0
        print(f"{'moment':>8} {'shape':>14} {'full':>5} {'jobs':>5} {'kept':>6}  mid-stream jobs")
        for delay in (*DELAYS_MS, None):
            for shape in SHAPES if delay is not None else [s for s in SHAPES if s.endswith("sse")]:
                home = Path(tmp) / f"{shape}-{delay}"
                home.mkdir()
                server = Server(home, args.port or free_port(), upstream)
                full, written, partial = crash_round(server, shape, delay, args.runs)
                total_full += full
                total_written += written
                moment = "mid" if delay is None else f"{delay} ms"
                share = f"{100 * written / full:.0f} %" if full else "—"
                print(f"{moment:>8} {shape:>14} {full:>5} {written:>5} {share:>6}  {partial}")
        print(
            f"complete replies: {total_full}, with a job after kill -9: {total_written} "
            f"({100 * total_written / max(1, total_full):.1f} %)"
        )
        home = Path(tmp) / "restart"
        home.mkdir()
        server = Server(home, args.port or free_port(), upstream)
        took, without, imported = restart_to_healthy(server, args.pending)
        print(
            f"restart to healthy after kill -9 with {args.pending} pending jobs: {took:.2f} s "
            f"(target <= 3 s); with no extraction workers: {without:.2f} s; "
            f"`import litellm` alone: {imported:.2f} s"
        )


if __name__ == "__main__":
    main()
