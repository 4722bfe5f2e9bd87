"""Restart to healthy: how soon `tenure serve` answers `/healthz` with 100 pending jobs, and how
slowly it answers while LiteLLM is imported in the background.

LiteLLM's import costs seconds of CPU. It used to run on the event loop inside the first
extraction call, so a restart with pending jobs froze `/healthz` (and every stream) for that
long. It now runs in a thread from start-up. The run measures, in one go:

- the import itself in a fresh interpreter (the stall the loop no longer takes);
- baseline: start with extraction off (LiteLLM never imported), 100 pending jobs;
- start with extraction on, 100 pending jobs; then kill -9 mid-run and start again (the jobs
  it held are reclaimed);
- for each start: seconds from spawn to the first `/healthz` 200, then the slowest `/healthz`
  answer over the next few seconds (polled every 50 ms), and the ratios to the baseline.

Target: healthy <= 3 s after kill -9 with 100 pending jobs.
Run: `.venv/bin/python bench/restart_healthy.py [--port 6001] [--watch 6]`.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from beliefs.opening import open_store  # noqa: E402
from extractor.jobs import JobQueue  # noqa: E402
from extractor.turn import Turn  # noqa: E402

PENDING = 100


def seed(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    with open_store(home / "tenure.duckdb") as store:
        queue = JobQueue(store)
        queue.enqueue_many(
            [
                Turn(
                    request_id=f"req-{n}",
                    user_id="bench",
                    scopes=["project:bench"],
                    model="stand-in-model",
                    user_message=f"We keep the cache in Valkey now, turn {n}.",
                    assistant_message="Noted.",
                )
                for n in range(PENDING)
            ]
        )


def start_upstream() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.upstream"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    return proc, f"http://127.0.0.1:{int(proc.stdout.readline())}/v1"


def healthz(url: str) -> float | None:
    """Seconds the answer took, or None when it was not a 200."""
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return time.perf_counter() - started if resp.status == 200 else None
    except OSError:
        return None


def serve(
    env: dict[str, str], port: int, watch: float
) -> tuple[subprocess.Popen[str], float, float]:
    """Start the server; (process, seconds to healthy, slowest /healthz while watching)."""
    url = f"http://127.0.0.1:{port}/healthz"
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "proxy.cli.main", "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    while healthz(url) is None:
        if proc.poll() is not None or time.perf_counter() - started > 120:
            raise SystemExit("the server did not come up")
        time.sleep(0.02)
    healthy = time.perf_counter() - started
    slowest = 0.0
    end = time.perf_counter() + watch
    while time.perf_counter() < end:
        took = healthz(url)
        slowest = max(slowest, took if took is not None else 10.0)
        time.sleep(0.05)
    return proc, healthy, slowest


def stop(proc: subprocess.Popen[str], *, kill: bool = False) -> None:
    if kill:
        os.kill(proc.pid, signal.SIGKILL)
    else:
        proc.send_signal(signal.SIGINT)
    proc.wait(30)


def import_seconds() -> float:
    code = "import time; t = time.perf_counter(); import litellm; print(time.perf_counter() - t)"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=6001)
    parser.add_argument("--watch", type=float, default=6.0, help="seconds to poll after healthy")
    args = parser.parse_args()
    upstream, upstream_url = start_upstream()
    try:
        with tempfile.TemporaryDirectory(prefix="tenure-bench-restart-") as tmp:
            home = Path(tmp) / "home"
            seed(home)
            env = {
                **os.environ,
                "TENURE_HOME": str(home),
                "TENURE_UPSTREAM_URL": upstream_url,
                "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                "TENURE_EXTRACT_BACKOFF_S": "30",  # failed jobs wait: the backlog stays
            }
            imported = import_seconds()
            base, base_healthy, base_slowest = serve(
                {**env, "TENURE_EXTRACT_WORKERS": "0"}, args.port, args.watch
            )
            stop(base)
            first, healthy, slowest = serve(
                {**env, "TENURE_EXTRACT_WORKERS": "1"}, args.port, args.watch
            )
            stop(first, kill=True)
            again, killed_healthy, killed_slowest = serve(
                {**env, "TENURE_EXTRACT_WORKERS": "1"}, args.port, args.watch
            )
            stop(again)
    finally:
        upstream.terminate()
        upstream.wait(10)
    print(f"import litellm in a fresh interpreter:     {imported:.2f} s (the old loop stall)")
    print(
        f"baseline, extraction off, {PENDING} pending:    healthy {base_healthy:.2f} s, "
        f"slowest /healthz {base_slowest * 1000:.0f} ms"
    )
    print(
        f"extraction on, {PENDING} pending:             healthy {healthy:.2f} s "
        f"({healthy / base_healthy:.2f}x baseline), slowest /healthz {slowest * 1000:.0f} ms"
    )
    print(
        f"after kill -9, {PENDING} pending:             healthy {killed_healthy:.2f} s "
        f"({killed_healthy / base_healthy:.2f}x baseline), slowest /healthz "
        f"{killed_slowest * 1000:.0f} ms"
    )
    verdict = "met" if killed_healthy <= 3.0 else "missed"
    print(f"target healthy <= 3 s after kill -9: {verdict}")


if __name__ == "__main__":
    main()
