"""Scale: what the gateway costs as the store grows, for this tree and a baseline tree.

Builds stores of 10k, 100k and 1M beliefs (one user, or spread over 1,000 users) once each into
a cache directory (`--cache`; the corpus is `bench/corpus.py`'s), then, for every store and every
code tree (this one, and a baseline checked out with `git worktree` at `--baseline`, default
`main`), starts `tenure serve` on a copy of the store beside the stand-in provider and measures:

- start-up: seconds from launch to the first `/healthz` answer and to the first proxied request
  that carries memory;
- idle RSS once the index is loaded;
- added latency p50/p99 (sequential, direct and proxied alternately);
- throughput and the proxy's CPU per request at 32 concurrent clients;
- the share of proxied requests that went out without memory, and the share whose retrieval
  reached `TENURE_RETRIEVAL_TIMEOUT_MS` (code before the deadline sent those without memory;
  since, they go with what the search found by then).

Targets on a 2-core machine: CPU per request <= 400 µs at 10k and <= 1 ms at 1M (one user),
RSS <= 2 GB at 1M, `/healthz` within 2 s at any size, no request without memory at 1M.

Run: `.venv/bin/python bench/scale.py [--sizes 10000,100000] [--layouts one,spread]`;
`--env TENURE_INDEX_MAX_BELIEFS=500000` sets this tree's server's settings and
`--active-users 200` sends the requests to that many of a spread store's users.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from beliefs.opening import open_store
from beliefs.store.rows import BELIEF_COLUMNS, belief_params
from bench.corpus import iter_corpus, make_queries
from bench.gateway_latency import (
    PERSONA,
    SCOPES,
    body,
    cpu_seconds,
    drain,
    free_port,
    serve_env,
    stand_in_upstream,
)
from bench.gateway_report import percentile

REPO = Path(__file__).resolve().parents[1]
USER = "bench-user"
SPREAD_USERS = 1000
CHUNK = 50_000
LAYOUTS = {"one": 1, "spread": SPREAD_USERS}


def build(path: Path, size: int, users: int) -> None:
    """Write the store once: the schema through the store, the rows in bulk statements (a
    spread store is the one-user store with its rows handed round the users)."""
    if path.exists():
        return
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    if users > 1:
        one = path.with_name(f"store-{size}-one.duckdb")
        build(one, size, 1)
        shutil.copy(one, partial)
        conn = duckdb.connect(str(partial))
        conn.execute(
            "UPDATE beliefs SET user_id = ? || '-' || "
            "CAST(CAST(split_part(id, '-', 3) AS BIGINT) % ? AS VARCHAR)",
            [USER, users],
        )
        conn.execute(
            "INSERT INTO personas SELECT ? || '-' || CAST(i AS VARCHAR), text, source, "
            "inputs_hash, updated_at FROM personas, range(?) AS r(i)",
            [USER, min(users, 50)],
        )
        conn.close()
        partial.rename(path)
        return
    with open_store(partial) as store:
        store.set_persona(USER, PERSONA, source="operator")
    conn = duckdb.connect(str(partial))
    types = dict(
        conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'beliefs'"
        ).fetchall()
    )
    quoted = ", ".join(f'"{c}"' for c in BELIEF_COLUMNS)
    selects = ", ".join(f"unnest(${i}::{types[c]}[])" for i, c in enumerate(BELIEF_COLUMNS, 1))
    insert = f"INSERT INTO beliefs ({quoted}) SELECT {selects}"
    beliefs = iter_corpus(size, user_id=USER, users=users)
    started = time.perf_counter()
    while chunk := [belief_params(b) for b in itertools.islice(beliefs, CHUNK)]:
        conn.execute(insert, [list(column) for column in zip(*chunk, strict=True)])
    conn.close()
    partial.rename(path)
    print(f"  built {path.name} in {time.perf_counter() - started:.0f} s", flush=True)


def baseline_tree(ref: str, where: Path) -> Path:
    """A detached checkout of `ref` (removed at the end; nothing is committed)."""
    subprocess.run(
        ["git", "worktree", "add", "--detach", "--force", str(where), ref],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    return where


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class Run:
    tree: str
    size: int
    layout: str
    figures: dict[str, float] = field(default_factory=dict)


class Client:
    """Proxied and direct requests; a spread store's requests rotate over its users."""

    def __init__(self, session: aiohttp.ClientSession, users: int) -> None:
        self.session = session
        self.users = users
        self.queries = make_queries(500)
        self.serial = itertools.count()
        self.injected: list[int] = []

    def headers(self, i: int) -> dict[str, str]:
        user = USER if self.users == 1 else f"{USER}-{(i * 7919) % self.users}"
        return {"X-Tenure-User": user, "X-Tenure-Scope": SCOPES, "Authorization": "Bearer sk-b"}

    async def call(self, base: str, i: int, *, record: bool = True) -> tuple[float, int]:
        query = f"{self.queries[i % len(self.queries)]} (turn {next(self.serial)})"
        started = time.perf_counter()
        async with self.session.post(
            base + "/chat/completions", data=body(query), headers=self.headers(i)
        ) as resp:
            await resp.read()
            assert resp.status == 200, resp.status
            injected = int(resp.headers.get("x-tenure-injected", "0"))
        if record:
            self.injected.append(injected)
        return time.perf_counter() - started, injected


async def wait_until(url: str, process: subprocess.Popen[str], limit: float) -> dict[str, Any]:
    deadline = time.monotonic() + limit
    async with aiohttp.ClientSession() as session:
        while True:
            try:
                async with session.get(url, timeout=aiohttp.ClientTimeout(total=5)) as resp:
                    return dict(await resp.json())
            except (aiohttp.ClientError, TimeoutError):
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{url} did not answer")
            await asyncio.sleep(0.02)


async def settle(pid: int, limit: float = 120) -> None:
    """Wait until start-up work in the background (imports on threads) has finished."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        before = cpu_seconds(pid)
        await asyncio.sleep(0.5)
        if cpu_seconds(pid) - before < 0.02:
            return


async def measure(
    run: Run, process: subprocess.Popen[str], started: float, direct: str, port: int, args: Any
) -> None:
    proxy = f"http://127.0.0.1:{port}/v1"
    health = f"http://127.0.0.1:{port}/healthz"
    await wait_until(health, process, args.start_limit)
    run.figures["start_healthz_s"] = time.monotonic() - started
    users = min(LAYOUTS[run.layout], args.active_users or LAYOUTS[run.layout])
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=2)
    async with aiohttp.ClientSession(connector=connector) as session:
        client = Client(session, users)
        # First memory: the one user (or user 0) asks until memory comes with the reply.
        for i in itertools.count():
            _, injected = await client.call(proxy, 0, record=False)
            if injected:
                break
            if time.monotonic() - started > args.start_limit:
                raise SystemExit("no memory within the start limit")
            await asyncio.sleep(0.05 if i < 200 else 0.5)
        run.figures["start_memory_s"] = time.monotonic() - started
        while (await wait_until(health, process, 60)).get("loading"):
            await asyncio.sleep(0.2)
        run.figures["start_loaded_s"] = time.monotonic() - started
        await settle(process.pid)
        run.figures["idle_rss_mb"] = rss_mb(process.pid)
        for i in range(args.warmup):
            await client.call(direct, i, record=False)
            await client.call(proxy, i, record=False)
        await drain(session, proxy)
        timeouts_before = (await wait_until(health, process, 60))["counters"]["retrieval_timeouts"]
        seq_d, seq_p = [], []
        for i in range(args.sequential):
            seq_d.append((await client.call(direct, i, record=False))[0])
            seq_p.append((await client.call(proxy, i))[0])
        run.figures["added_p50_ms"] = (percentile(seq_p, 50) - percentile(seq_d, 50)) * 1000
        run.figures["added_p99_ms"] = (percentile(seq_p, 99) - percentile(seq_d, 99)) * 1000
        await drain(session, proxy)
        counter = iter(range(args.concurrent_requests))

        async def worker() -> None:
            for i in counter:
                await client.call(proxy, i)

        cpu_before = cpu_seconds(process.pid)
        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(args.workers)))
        elapsed = time.perf_counter() - began
        run.figures["rps_32"] = args.concurrent_requests / elapsed
        run.figures["cpu_us"] = (
            (cpu_seconds(process.pid) - cpu_before) / args.concurrent_requests * 1e6
        )
        run.figures["without_memory_pct"] = (
            100 * sum(1 for n in client.injected if n == 0) / len(client.injected)
        )
        timeouts = (await wait_until(health, process, 60))["counters"]["retrieval_timeouts"]
        run.figures["retrieval_timeouts_pct"] = (
            100 * (timeouts - timeouts_before) / (args.sequential + args.concurrent_requests)
        )
        run.figures["rss_mb"] = rss_mb(process.pid)
        await drain(session, proxy)


def serve(tree: Path, store: Path, upstream_port: int, run: Run, args: Any) -> None:
    home = Path(tempfile.mkdtemp(prefix="tenure-scale-"))
    try:
        shutil.copy(store, home / "tenure.duckdb")
        port = free_port()
        env = serve_env(home, port, upstream_port)
        if run.tree == "this":
            env.update(dict(pair.split("=", 1) for pair in args.env))
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "proxy.cli.main", "serve"], cwd=tree, env=env, text=True
        )
        try:
            direct = f"http://127.0.0.1:{upstream_port}/v1"
            asyncio.run(measure(run, process, started, direct, port, args))
        finally:
            process.terminate()
            process.wait(timeout=60)
    finally:
        shutil.rmtree(home, ignore_errors=True)


COLUMNS = (
    ("start_healthz_s", "start to /healthz s"),
    ("start_memory_s", "start to first memory s"),
    ("start_loaded_s", "start to index loaded s"),
    ("idle_rss_mb", "idle RSS MB"),
    ("rss_mb", "RSS after load MB"),
    ("cpu_us", "CPU / request µs"),
    ("added_p50_ms", "added p50 ms"),
    ("added_p99_ms", "added p99 ms"),
    ("rps_32", "req/s at 32 concurrent"),
    ("without_memory_pct", "requests without memory %"),
    ("retrieval_timeouts_pct", "retrieval over its limit %"),
)


def report(runs: list[Run]) -> None:
    keys = sorted({(r.size, r.layout) for r in runs}, key=lambda k: (k[0], k[1]))
    for size, layout in keys:
        by_tree = {r.tree: r for r in runs if (r.size, r.layout) == (size, layout)}
        base, new = by_tree.get("baseline"), by_tree.get("this")
        print(f"\n{size:,} beliefs, {layout} ({LAYOUTS[layout]} user(s))")
        print(f"  {'':28} {'baseline':>10} {'this':>10} {'ratio':>7}")
        for key, label in COLUMNS:
            b = base.figures.get(key) if base else None
            n = new.figures.get(key) if new else None
            ratio = f"{n / b:7.2f}" if b and n is not None else ""
            shown = [f"{v:10.2f}" if v is not None else f"{'-':>10}" for v in (b, n)]
            print(f"  {label:28} {shown[0]} {shown[1]} {ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--layouts", default="one,spread")
    parser.add_argument("--baseline", default="main", help="git ref to compare ('' for none)")
    parser.add_argument("--trees", default="baseline,this")
    parser.add_argument(
        "--this", default="", help="git ref to measure as 'this' (default: the working tree)"
    )
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "tenure-scale")
    parser.add_argument("--sequential", type=int, default=300)
    parser.add_argument("--concurrent-requests", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--start-limit", type=float, default=900)
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    parser.add_argument(
        "--env", action="append", default=[], help="KEY=VALUE for this tree's server (repeat)"
    )
    parser.add_argument(
        "--active-users", type=int, default=0, help="requests go to this many users (0: all)"
    )
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    trees = {"this": REPO}
    worktrees: list[Path] = []
    for name, ref in (("baseline", args.baseline), ("this", args.this)):
        if ref and name in args.trees.split(","):
            worktrees.append(Path(tempfile.mkdtemp(prefix=f"tenure-{name}-")) / "tree")
            trees[name] = baseline_tree(ref, worktrees[-1])
    trees = {name: trees[name] for name in args.trees.split(",") if name in trees}
    upstream, upstream_port = stand_in_upstream()
    runs: list[Run] = []
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            for layout in args.layouts.split(","):
                store = args.cache / f"store-{size}-{layout}.duckdb"
                print(f"{size:,} beliefs, {layout}: building …", flush=True)
                build(store, size, LAYOUTS[layout])
                for name, tree in trees.items():
                    run = Run(name, size, layout)
                    print(f"  serving from {name} …", flush=True)
                    serve(tree, store, upstream_port, run, args)
                    print(f"    {json.dumps({k: round(v, 3) for k, v in run.figures.items()})}")
                    runs.append(run)
                    if args.out:
                        args.out.write_text(json.dumps([r.__dict__ for r in runs], indent=1))
    finally:
        upstream.terminate()
        upstream.wait(timeout=30)
        for worktree in worktrees:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(worktree)], cwd=REPO, check=False
            )
    report(runs)


if __name__ == "__main__":
    main()
