"""Gateway latency: the same load directly against the stand-in provider and through the proxy.

Starts the stand-in provider (instant replies) and `tenure serve` as separate processes, seeds
10k beliefs for one user, then measures from this process:

- sequential non-streaming requests, direct and proxied alternately (added latency p50/p99);
- sequential streaming requests (added time to the first SSE event);
- 64 concurrent clients, direct then proxied (throughput ratio);
- the ceiling: 64 concurrent clients sending the proxy's placed bodies straight to the provider,
  and the CPU each process spends per request, so the proxy's share is visible.

Every proxied request carries memory (persona, pinned and relevant beliefs found for a varied
turn text). Targets on a 2-core machine: added p50 <= 1 ms, p99 <= 5 ms, added time to first
token <= 2 ms, throughput at 64 concurrent >= 50 % of direct.

Run: `make bench-gateway` or `.venv/bin/python bench/gateway_latency.py [--sequential 2000]`.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from beliefs.model.models import Belief
from beliefs.opening import open_store
from bench.corpus import make_corpus, make_queries
from bench.gateway_report import report
from proxy.gateway.protocols.chat_completions import place_openai

REPO = Path(__file__).resolve().parents[1]
USER = "bench-user"
SCOPES = "domain:code,project:billing"
PERSONA = "You prefer direct answers without preamble and push back when plans have problems."
HEADERS = {"X-Tenure-User": USER, "X-Tenure-Scope": SCOPES, "Authorization": "Bearer sk-bench"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stand_in_upstream() -> tuple[subprocess.Popen[bytes], int]:
    """The stand-in provider in a process of its own (none of the caller's TENURE_ settings),
    and the port it printed once listening."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENURE_")}
    upstream = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.upstream"], cwd=REPO, env=env, stdout=subprocess.PIPE
    )
    assert upstream.stdout is not None
    return upstream, int(upstream.stdout.readline())


def serve_env(home: Path, port: int, upstream: int, tree: Path | None = None) -> dict[str, str]:
    """The environment of a benchmark's `tenure serve`: none of the caller's TENURE_ settings,
    its own home and port, the stand-in provider upstream, no extraction workers, warnings
    only; `tree` on PYTHONPATH when given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENURE_")}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    env.update(
        TENURE_HOME=str(home),
        TENURE_PORT=str(port),
        TENURE_UPSTREAM_URL=f"http://127.0.0.1:{upstream}/v1",
        TENURE_EXTRACT_WORKERS="0",
        TENURE_LOG_LEVEL="warning",
    )
    return env


def seed(home: Path, size: int) -> None:
    corpus = make_corpus(size, user_id=USER)
    pinned = [
        Belief(
            user_id=USER,
            canonical_name=f"house_rule_{i}",
            content=f"House rule {i} for code in this project.",
            scope=["domain:code"],
            pinned=True,
        )
        for i in range(3)
    ]
    with open_store(home / "tenure.duckdb") as store:
        store.import_beliefs([*corpus, *pinned])
        store.set_persona(USER, PERSONA, source="operator")


def start(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, *args], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True
    )


def wait_healthy(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{url} did not come up")
        time.sleep(0.1)


def body(query: str, *, stream: bool = False) -> bytes:
    return json.dumps(
        {
            "model": "gpt-4o-mini",
            "stream": stream,
            "messages": [
                {"role": "system", "content": "You are a careful coding assistant."},
                {"role": "user", "content": query},
            ],
        }
    ).encode()


class Load:
    """Requests against one base URL with a pooled client; records injected counts."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        base: str,
        queries: list[str],
        headers: dict[str, str] | None = None,
    ) -> None:
        self.session = session
        self.headers = {**HEADERS, **(headers or {})}
        self.url = base + "/chat/completions"
        self.queries = queries
        # Every request is a new turn: the proxy's cache of repeated requests never hits.
        self.serial = itertools.count()
        self.injected: list[int] = []

    def body(self, i: int, *, stream: bool = False) -> bytes:
        query = f"{self.queries[i % len(self.queries)]} (turn {next(self.serial)})"
        return body(query, stream=stream)

    async def call(self, i: int) -> float:
        started = time.perf_counter()
        async with self.session.post(self.url, data=self.body(i), headers=self.headers) as resp:
            await resp.read()
            assert resp.status == 200, resp.status
            self.injected.append(int(resp.headers.get("x-tenure-injected", "0")))
        return time.perf_counter() - started

    async def first_event(self, i: int) -> float:
        """Seconds to the first SSE `data:` line (time to first token)."""
        started = time.perf_counter()
        ttft = 0.0
        async with self.session.post(
            self.url, data=self.body(i, stream=True), headers=self.headers
        ) as resp:
            assert resp.status == 200, resp.status
            while line := await resp.content.readline():
                if not ttft and line.startswith(b"data:"):
                    ttft = time.perf_counter() - started
        return ttft


class Placed(Load):
    """Straight to the stand-in provider, each body carrying the memory the proxy would place
    for its turn (fetched from the proxy's prompt preview beforehand). Each body is encoded per
    request, as the direct load encodes its own."""

    def __init__(
        self, session: aiohttp.ClientSession, base: str, bodies: list[dict[str, Any]]
    ) -> None:
        super().__init__(session, base, [])
        self.bodies = bodies

    def body(self, i: int, *, stream: bool = False) -> bytes:
        return json.dumps(self.bodies[i % len(self.bodies)]).encode()


async def placed_bodies(
    session: aiohttp.ClientSession, proxy_base: str, queries: list[str]
) -> list[dict[str, Any]]:
    """Request bodies exactly as the proxy forwards them (memory placed), one per query."""
    preview = proxy_base.removesuffix("/v1") + "/api/prompts/preview"
    out = []
    for i, text in enumerate(queries):
        query = f"{text} (turn {i})"
        params = {"user": USER, "scope": SCOPES, "model": "gpt-4o-mini", "query": query}
        async with session.get(preview, params=params) as resp:
            blocks = await resp.json()
        out.append(
            place_openai(json.loads(body(query)), blocks["system_block"], blocks["user_block"])
        )
    return out


async def concurrent(
    call: Callable[[int], Awaitable[float]], total: int, workers: int
) -> tuple[float, list[float]]:
    """Requests per second and latencies with `workers` clients sharing `total` requests."""
    counter = iter(range(total))
    latencies: list[float] = []

    async def worker() -> None:
        for i in counter:
            latencies.append(await call(i))

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(workers)))
    return total / (time.perf_counter() - started), latencies


def cpu_seconds(pid: int | None) -> float:
    """CPU time (user + system, all threads) of a process; this process when `pid` is None."""
    if pid is None:
        return time.process_time()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU microseconds per request of the client (this process), the stand-in upstream and
    the proxy over one load phase."""

    def __init__(self, pids: dict[str, int | None]) -> None:
        self.pids = pids

    async def run(
        self, call: Callable[[int], Awaitable[float]], total: int, workers: int
    ) -> tuple[float, list[float], dict[str, float]]:
        before = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        rps, latencies = await concurrent(call, total, workers)
        used = {
            name: (cpu_seconds(pid) - before[name]) / total * 1e6 for name, pid in self.pids.items()
        }
        return rps, latencies, used


async def drain(session: aiohttp.ClientSession, proxy_base: str) -> None:
    """Wait until the proxy has written every queued record and job (phases stay separate)."""
    health = proxy_base.removesuffix("/v1") + "/healthz"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        async with session.get(health) as resp:
            if (await resp.json())["pending_writes"] == 0:
                return
        await asyncio.sleep(0.2)


async def measure(
    direct_base: str, proxy_base: str, args: argparse.Namespace, meter: CpuMeter
) -> dict[str, Any]:
    queries = make_queries(500)
    # Idle connections are dropped before the servers' own keep-alive timeout (uvicorn: 5 s).
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=2)
    async with aiohttp.ClientSession(connector=connector) as session:
        direct, proxy = Load(session, direct_base, queries), Load(session, proxy_base, queries)
        for i in range(args.warmup):
            await direct.call(i)
            await proxy.call(i)
            await direct.first_event(i)
            await proxy.first_event(i)
        proxy.injected.clear()
        await drain(session, proxy_base)

        seq_direct, seq_proxy = [], []
        for i in range(args.sequential):
            seq_direct.append(await direct.call(i))
            seq_proxy.append(await proxy.call(i))
        # A tool loop: the same last user message again and again (memory reused).
        await drain(session, proxy_base)
        loop = await tool_loop(session, (direct_base, proxy_base), body(queries[0]), args)

        await drain(session, proxy_base)
        ttft_direct, ttft_proxy = [], []
        for i in range(args.streaming):
            ttft_direct.append(await direct.first_event(i))
            ttft_proxy.append(await proxy.first_event(i))

        cpu: dict[str, list[dict[str, float]]] = {
            "direct": [],
            "proxy": [],
            "bare": [],
            "placed": [],
        }
        rounds = await load_rounds(session, proxy_base, (direct, proxy), args, meter, cpu)
        bare = await without_memory(session, proxy_base, direct, queries, args, meter, cpu)

        # The ceiling: the provider reading the longer prompts, with no proxy in between.
        placed = Placed(session, direct_base, await placed_bodies(session, proxy_base, queries))
        placed_rps_d, _ = await concurrent(direct.call, args.concurrent_requests, args.workers)
        placed_rps, _, cpu_m = await meter.run(placed.call, args.concurrent_requests, args.workers)
        cpu["placed"].append(cpu_m)
    injected = proxy.injected
    return {
        "seq": (seq_direct, seq_proxy),
        "ttft": (ttft_direct, ttft_proxy),
        "rounds": rounds,
        "bare": bare,
        "loop": loop,
        "placed": (placed_rps_d, placed_rps, len(placed.body(0)), len(body(queries[0]))),
        "cpu": cpu,
        "injected_mean": sum(injected) / max(1, len(injected)),
        "injected_zero": sum(1 for n in injected if n == 0),
    }


async def tool_loop(
    session: aiohttp.ClientSession,
    bases: tuple[str, str],
    loop_body: bytes,
    args: argparse.Namespace,
) -> tuple[list[float], list[float]]:
    """The same request again and again, to the provider and through the proxy, alternately."""
    loop_direct: list[float] = []
    loop_proxy: list[float] = []
    for _ in range(args.sequential // 4):
        for base, out in ((bases[0], loop_direct), (bases[1], loop_proxy)):
            started = time.perf_counter()
            async with session.post(
                base + "/chat/completions", data=loop_body, headers=HEADERS
            ) as resp:
                await resp.read()
            out.append(time.perf_counter() - started)
    return loop_direct, loop_proxy


async def load_rounds(
    session: aiohttp.ClientSession,
    proxy_base: str,
    loads: tuple[Load, Load],
    args: argparse.Namespace,
    meter: CpuMeter,
    cpu: dict[str, list[dict[str, float]]],
) -> list[tuple[float, float, list[float], list[float]]]:
    """Rounds of concurrent load, direct then through the proxy: throughput and latencies."""
    direct, proxy = loads
    rounds: list[tuple[float, float, list[float], list[float]]] = []
    for _ in range(args.rounds):
        await drain(session, proxy_base)
        rps_d, lat_d, cpu_d = await meter.run(direct.call, args.concurrent_requests, args.workers)
        rps_p, lat_p, cpu_p = await meter.run(proxy.call, args.concurrent_requests, args.workers)
        rounds.append((rps_d, rps_p, lat_d, lat_p))
        cpu["direct"].append(cpu_d)
        cpu["proxy"].append(cpu_p)
    return rounds


async def without_memory(
    session: aiohttp.ClientSession,
    proxy_base: str,
    direct: Load,
    queries: list[str],
    args: argparse.Namespace,
    meter: CpuMeter,
    cpu: dict[str, list[dict[str, float]]],
) -> tuple[list[float], list[float], float, float]:
    """The same through the proxy without memory or extraction: the gateway's own share."""
    bare = Load(session, proxy_base, queries, {"X-Tenure-Incognito": "1"})
    await drain(session, proxy_base)
    bare_direct: list[float] = []
    bare_seq: list[float] = []
    for i in range(args.sequential // 2):
        bare_direct.append(await direct.call(i))
        bare_seq.append(await bare.call(i))
    bare_rps_d, _ = await concurrent(direct.call, args.concurrent_requests, args.workers)
    bare_rps, _, cpu_b = await meter.run(bare.call, args.concurrent_requests, args.workers)
    cpu["bare"].append(cpu_b)
    return bare_direct, bare_seq, bare_rps_d, bare_rps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beliefs", type=int, default=10_000)
    parser.add_argument("--sequential", type=int, default=2000)
    parser.add_argument("--streaming", type=int, default=1000)
    parser.add_argument("--concurrent-requests", type=int, default=4000)
    parser.add_argument("--workers", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=200)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        print(f"seeding {args.beliefs} beliefs …", flush=True)
        seed(home, args.beliefs)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TENURE_")}
        upstream = start(["-m", "tests.fakes.upstream"], env)
        assert upstream.stdout is not None
        upstream_port = int(upstream.stdout.readline())
        proxy_port = free_port()
        proxy_env = {
            **env,
            "TENURE_HOME": str(home),
            "TENURE_PORT": str(proxy_port),
            "TENURE_UPSTREAM_URL": f"http://127.0.0.1:{upstream_port}/v1",
            "TENURE_EXTRACT_WORKERS": "0",
            "TENURE_LOG_LEVEL": "warning",
        }
        proxy = start(["-m", "proxy.cli.main", "serve"], proxy_env)
        try:
            wait_healthy(f"http://127.0.0.1:{proxy_port}/healthz", proxy)
            print("measuring …", flush=True)
            meter = CpuMeter({"client": None, "upstream": upstream.pid, "proxy": proxy.pid})
            result = asyncio.run(
                measure(
                    f"http://127.0.0.1:{upstream_port}/v1",
                    f"http://127.0.0.1:{proxy_port}/v1",
                    args,
                    meter,
                )
            )
            with urllib.request.urlopen(f"http://127.0.0.1:{proxy_port}/healthz") as resp:
                health = json.loads(resp.read())
        finally:
            for process in (proxy, upstream):
                process.terminate()
                process.wait(timeout=30)
        ok = report(result, health, args)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
