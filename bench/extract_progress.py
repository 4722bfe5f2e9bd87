"""Extraction progress under sustained load: jobs/s and the backlog's age after 60 s of traffic.

A real `tenure serve` (one extraction worker, the default) in front of a stand-in provider that
answers chat requests at once and extraction requests (those asking for a JSON schema) with a
valid extraction. `--clients` concurrent clients send chat requests for `--seconds`; then the
server is stopped and the job table read: jobs extracted per second during the run (done or
parked as failed), jobs still pending, and how old the oldest pending one was when the load
stopped, next to the request rate the gateway served.

Run: `.venv/bin/python bench/extract_progress.py [--clients 64] [--seconds 60] [--port 5903]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from beliefs.opening import open_store  # noqa: E402
from bench.crash_turns import Server, free_port  # noqa: E402


def stand_in() -> None:
    """The provider: every extraction request gets a valid (empty) extraction."""
    from tests.extractor.fake_llm import extraction
    from tests.fakes.upstream import Chat, FakeUpstream, Recorded

    reply = Chat(content=json.dumps(extraction()))

    class Provider(FakeUpstream):
        def _next(self, rec: Recorded) -> Chat | None:
            body = rec.json
            return reply if isinstance(body, dict) and "response_format" in body else None

    provider = Provider()
    provider.start(0)
    provider.requests = _Discard()
    print(provider.port, flush=True)
    threading.Event().wait()


class _Discard(list):  # type: ignore[type-arg]
    def append(self, item: object) -> None:
        pass


async def load(base: str, clients: int, seconds: float) -> tuple[int, int]:
    """(requests answered 200, other answers) from `clients` loops for `seconds`."""
    ok = bad = 0
    deadline = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:

        async def one_client(n: int) -> None:
            nonlocal ok, bad
            i = 0
            while time.monotonic() < deadline:
                i += 1
                body = {
                    "model": "stand-in-model",
                    "messages": [{"role": "user", "content": f"client {n} turn {i}: use Helm"}],
                }
                try:
                    resp = await client.post(
                        "/v1/chat/completions",
                        json=body,
                        headers={"X-Tenure-User": f"user-{n % 8}", "X-Tenure-Scope": "project:x"},
                    )
                    ok += resp.status_code == 200
                    bad += resp.status_code != 200
                except httpx.HTTPError:
                    bad += 1

        await asyncio.gather(*(one_client(n) for n in range(clients)))
    return ok, bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--stand-in", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stand_in:
        stand_in()
        return
    provider = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--stand-in"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
    )
    try:
        assert provider.stdout is not None
        upstream = f"http://127.0.0.1:{int(provider.stdout.readline())}/v1"
        with tempfile.TemporaryDirectory() as tmp:
            server = Server(Path(tmp), args.port or free_port(), upstream)
            server.extra_env = {"TENURE_EXTRACT_WORKERS": "1"}
            server.start()
            began = datetime.now(UTC)
            ok, bad = asyncio.run(load(server.base, args.clients, args.seconds))
            ended = datetime.now(UTC)
            server.stop()
            with open_store(Path(tmp) / "tenure.duckdb", read_only=True) as store:
                handled = store.execute(
                    "SELECT count(*) FROM jobs WHERE status IN ('done', 'failed') "
                    "AND finished_at BETWEEN ? AND ?",
                    [began, ended],
                ).fetchone()
                pending, oldest = store.execute(
                    "SELECT count(*), min(created_at) FROM jobs WHERE status = 'pending'"
                ).fetchone() or (0, None)
                total = store.execute("SELECT count(*) FROM jobs").fetchone()
    finally:
        provider.terminate()
        provider.wait(10)
    seconds = (ended - began).total_seconds()
    done = int(handled[0]) if handled else 0
    age = (ended - oldest).total_seconds() if oldest is not None else 0.0
    print(
        f"{args.clients} clients for {seconds:.0f} s: {ok / seconds:.1f} requests/s ({bad} not 200)"
    )
    print(
        f"extraction: {done / seconds:.2f} jobs/s; jobs written {total[0] if total else 0}, "
        f"pending at the end {pending}, oldest pending {age:.1f} s old"
    )


if __name__ == "__main__":
    main()
