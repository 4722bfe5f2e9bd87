"""Replicas on one PostgreSQL database: how fast a write reaches the other replica's memory, and
what a second worker process buys.

Starts a throwaway PostgreSQL server (Debian's binaries, as the tests do; or `--database-url`),
the stand-in provider, and seeds 10k beliefs for one user. Then, in one run:

- propagation: two `tenure serve` replicas A and B; a belief is created through A's API and B's
  API is polled until it serves it (p50, p99; target p99 <= 250 ms);
- throughput: `tenure serve --workers 1`, then `--workers 2`, each under 64 concurrent proxied
  requests with memory, beside the provider alone (the baseline measured in the same run), with
  the CPU each process spends per request.

Run: `.venv/bin/python bench/replicas.py [--writes 300] [--requests 4000]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from beliefs.opening import open_store
from bench.corpus import make_corpus, make_queries
from bench.gateway_latency import (
    PERSONA,
    USER,
    Load,
    concurrent,
    cpu_seconds,
    free_port,
    start,
    wait_healthy,
)
from bench.gateway_report import percentile
from tests.postgres_server import PostgresServer, postgres_bin


def seed(url: str, size: int) -> None:
    with open_store(url) as store:
        store.import_beliefs(make_corpus(size, user_id=USER))
        store.set_persona(USER, PERSONA, source="operator")


@contextmanager
def serving(
    env: dict[str, str], home: Path, *args: str, replica: str | None = None
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = free_port()
    extra = {"TENURE_HOME": str(home), "TENURE_PORT": str(port)}
    if replica:
        extra["TENURE_REPLICA_ID"] = replica
    proc = start(["-m", "proxy.cli.main", "serve", *args], {**env, **extra})
    try:
        wait_healthy(f"http://127.0.0.1:{port}/healthz", proc)
        yield f"http://127.0.0.1:{port}", proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


async def propagation(a: str, b: str, writes: int) -> list[float]:
    delays = []
    async with aiohttp.ClientSession() as session:
        for i in range(writes):
            belief = {
                "user_id": USER,
                "canonical_name": f"replica_probe_{i}",
                "content": f"Probe {i}.",
                "scope": ["domain:code"],
            }
            async with session.post(f"{a}/api/beliefs", json=belief) as resp:
                assert resp.status == 201, await resp.text()
                bid = (await resp.json())["id"]
            written = time.perf_counter()
            while True:
                async with session.get(f"{b}/api/beliefs/{bid}") as resp:
                    if resp.status == 200:
                        break
                await asyncio.sleep(0.001)
            delays.append(time.perf_counter() - written)
    return delays


async def throughput(
    base: str, requests: int, clients: int, pids: dict[str, int]
) -> tuple[float, dict[str, float], float]:
    """(requests/s, CPU µs per request per process, share of requests that carried memory)."""
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=2)
    async with aiohttp.ClientSession(connector=connector) as session:
        load = Load(session, base + "/v1", make_queries(500))
        await concurrent(load.call, 200, clients)  # warm-up
        load.injected.clear()
        before = {n: cpu_seconds(p) for n, p in pids.items()}
        rps, _ = await concurrent(load.call, requests, clients)
        used = {n: (cpu_seconds(p) - before[n]) / requests * 1e6 for n, p in pids.items()}
        carried = sum(1 for n in load.injected if n) / max(1, len(load.injected))
    return rps, used, carried


async def direct(base: str, requests: int, clients: int) -> float:
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=2)
    async with aiohttp.ClientSession(connector=connector) as session:
        load = Load(session, base, make_queries(500))
        await concurrent(load.call, 200, clients)
        rps, _ = await concurrent(load.call, requests, clients)
    return rps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", help="an empty PostgreSQL database (default: start one)")
    parser.add_argument("--beliefs", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--clients", type=int, default=64)
    args = parser.parse_args()

    server = None
    if args.database_url is None:
        bin_dir = postgres_bin()
        if bin_dir is None:
            raise SystemExit("PostgreSQL is not installed: apt-get install postgresql")
        server = PostgresServer(bin_dir).start()
    try:
        url = args.database_url or server.new_database()  # type: ignore[union-attr]
        print(f"seeding {args.beliefs} beliefs …", flush=True)
        seed(url, args.beliefs)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TENURE_")}
        upstream = start(["-m", "tests.fakes.upstream"], env)
        assert upstream.stdout is not None
        upstream_url = f"http://127.0.0.1:{int(upstream.stdout.readline())}/v1"
        env.update(
            {
                "TENURE_DATABASE_URL": url,
                "TENURE_UPSTREAM_URL": upstream_url,
                "TENURE_EXTRACT_WORKERS": "0",
                "TENURE_LOG_LEVEL": "warning",
            }
        )
        try:
            with tempfile.TemporaryDirectory() as tmp:
                run(Path(tmp), env, upstream, upstream_url, args)
        finally:
            upstream.terminate()
            upstream.wait(timeout=30)
    finally:
        if server is not None:
            server.stop()


def run(
    tmp: Path,
    env: dict[str, str],
    upstream: subprocess.Popen[str],
    upstream_url: str,
    args: argparse.Namespace,
) -> None:
    with (
        serving(env, tmp / "a", replica="a") as (a, _),
        serving(env, tmp / "b", replica="b") as (b, _),
    ):
        print("propagation …", flush=True)
        delays = asyncio.run(propagation(a, b, args.writes))
    p50, p99 = percentile(delays, 50), percentile(delays, 99)
    print(
        f"propagation A -> B over {len(delays)} writes: p50 {p50 * 1000:.1f} ms, "
        f"p99 {p99 * 1000:.1f} ms (target p99 <= 250 ms: {'met' if p99 <= 0.25 else 'MISSED'})"
    )
    base_rps = asyncio.run(direct(upstream_url, args.requests, args.clients))
    print(f"provider alone, {args.clients} concurrent: {base_rps:,.0f} req/s (baseline)")
    results = {}
    for workers in (1, 2):
        with serving(env, tmp / f"w{workers}", "--workers", str(workers)) as (base, proc):
            pids = {"upstream": upstream.pid}
            pids.update({f"worker{i}": pid for i, pid in enumerate(children(proc.pid))})
            if workers == 1:
                pids = {"upstream": upstream.pid, "worker0": proc.pid}
            rps, cpu, carried = asyncio.run(throughput(base, args.requests, args.clients, pids))
        results[workers] = rps
        per = ", ".join(f"{name} {us:,.0f} µs" for name, us in cpu.items())
        print(
            f"--workers {workers}: {rps:,.0f} req/s proxied with memory ({carried:.0%} carried "
            f"beliefs), {rps / base_rps:.2f} x the provider alone; CPU per request: {per}"
        )
    print(f"2 workers / 1 worker: {results[2] / results[1]:.2f} x")


if __name__ == "__main__":
    main()
