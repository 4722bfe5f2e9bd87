"""The durable wait at a streamed reply's end, this tree against a baseline commit, in one run.

For each store (as `bench/gateway_cost.py` builds them), a `tenure serve` of the baseline tree
and one of this tree run side by side on copies of the store, with the stand-in provider
behind both. In `--rounds` interleaved rounds (the order of the trees and of the modes turns
each round, so a shared machine's noise falls on both), `--streams` concurrent streaming
clients send `--stream-requests` requests per tree and mode; each reply's end is the time from
its last event before the final one to the final one. With memory the gateway holds that final
event until the turn's job is durable; incognito relays it at once: the difference of the p50s
is the durable wait (the target: <= 3 ms at 64 concurrent streams). Each tree's requests per
second with memory, and its CPU per request, show what the wait costs the rest: with the
clients always waiting on a reply, a reply's mean duration is `--streams` / (requests/s).

Run: `.venv/bin/python bench/durable_compare.py [--baseline main] [--rounds 4] [--quick]`;
`--env KEY=VALUE` sets both gateways' settings.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gateway_cost import Client, drained, gather, health, idle, ready
from bench.gateway_latency import (
    cpu_seconds,
    free_port,
    serve_env,
    stand_in_upstream,
    wait_healthy,
)
from bench.gateway_report import percentile
from bench.scale import LAYOUTS, build
from bench.worktree import REPO, checked_out

TREES = ("baseline", "this")
MODES = ("incognito", "memory")


@dataclass
class Gateway:
    base: str
    pid: int
    ends: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in MODES})
    seconds: dict[str, float] = field(default_factory=lambda: {m: 0.0 for m in MODES})
    cpu: dict[str, float] = field(default_factory=lambda: {m: 0.0 for m in MODES})
    not_durable: int = 0

    def rate(self, mode: str) -> float:
        return len(self.ends[mode]) / self.seconds[mode]

    def cpu_us(self, mode: str) -> float:
        return self.cpu[mode] / len(self.ends[mode]) * 1e6

    @property
    def wait_ms(self) -> float:
        p50 = {mode: percentile(values, 50) for mode, values in self.ends.items()}
        return (p50["memory"] - p50["incognito"]) * 1000


@contextmanager
def gateway(tree: Path, store: Path, upstream: int, env: list[str]) -> Iterator[Gateway]:
    """`tenure serve` of `tree` on a copy of `store` until the block ends."""
    home = Path(tempfile.mkdtemp(prefix="tenure-durable-"))
    try:
        shutil.copy(store, home / "tenure.duckdb")
        port = free_port()
        variables = serve_env(home, port, upstream, tree)
        variables.update(dict(pair.split("=", 1) for pair in env))
        process = subprocess.Popen(
            [sys.executable, "-m", "proxy.cli.main", "serve"], cwd=tree, env=variables, text=True
        )
        try:
            wait_healthy(f"http://127.0.0.1:{port}/healthz", process)
            yield Gateway(f"http://127.0.0.1:{port}", process.pid)
        finally:
            process.terminate()
            process.wait(timeout=60)
    finally:
        shutil.rmtree(home, ignore_errors=True)


async def measure(gateways: dict[str, Gateway], users: int, args: Any) -> None:
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=2)
    async with aiohttp.ClientSession(connector=connector) as session:
        client = Client(session, users)
        before = {}
        for name, gw in gateways.items():
            await ready(client, gw.base, gw.pid)
            for mode in MODES:
                await gather(
                    args.streams,
                    args.warmup,
                    lambda i, m=mode, b=gw.base: client.stream_end(b + "/v1", i, m),
                )
            await drained(session, gw.base)
            before[name] = (await health(session, gw.base))["counters"]
        for n in range(args.rounds):
            trees = TREES if n % 2 == 0 else TREES[::-1]
            for name in trees:
                gw = gateways[name]
                for mode in MODES if (n // 2) % 2 == 0 else MODES[::-1]:
                    began, cpu = time.perf_counter(), cpu_seconds(gw.pid)
                    gw.ends[mode] += await gather(
                        args.streams,
                        args.stream_requests,
                        lambda i, m=mode, b=gw.base: client.stream_end(b + "/v1", i, m),
                    )
                    gw.seconds[mode] += time.perf_counter() - began
                    await drained(session, gw.base)
                    await idle(gw.pid)  # what the load left behind is its cost too
                    gw.cpu[mode] += cpu_seconds(gw.pid) - cpu
        for name, gw in gateways.items():
            after = (await health(session, gw.base))["counters"]
            gw.not_durable = after.get("turns_not_durable", 0) - before[name].get(
                "turns_not_durable", 0
            )


def report(label: str, gateways: dict[str, Gateway], args: Any) -> float:
    """Print one store's figures; this tree's durable wait p50 in ms."""
    print(f"\n{label}: reply end at {args.streams} concurrent streams, ms")
    print(
        f"  {'':10} {'incognito p50/p99':>18} {'memory p50/p99':>18} {'wait p50':>9} late"
        "   memory: req/s  reply ms  CPU µs/req"
    )
    for name, gw in gateways.items():
        ends = {mode: [x * 1000 for x in values] for mode, values in gw.ends.items()}
        cells = [f"{percentile(v, 50):8.2f} /{percentile(v, 99):8.2f}" for v in ends.values()]
        print(
            f"  {name:10} {cells[0]:>18} {cells[1]:>18} {gw.wait_ms:9.2f} {gw.not_durable:4}"
            f" {gw.rate('memory'):14.0f} {args.streams / gw.rate('memory') * 1000:9.1f}"
            f" {gw.cpu_us('memory'):11.0f}"
        )
    base, this = gateways["baseline"], gateways["this"]
    memory = [percentile(gw.ends["memory"], 50) for gw in (base, this)]
    print(
        f"  this / baseline: durable wait p50 {this.wait_ms / base.wait_ms:.3f}, "
        f"memory reply end p50 {memory[1] / memory[0]:.3f}, memory req/s "
        f"{this.rate('memory') / base.rate('memory'):.3f}, memory CPU/req "
        f"{this.cpu_us('memory') / base.cpu_us('memory'):.3f}"
    )
    return this.wait_ms


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="the commit to compare with")
    parser.add_argument("--this", help="a commit to measure instead of this tree")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--streams", type=int, default=64, help="concurrent streaming clients")
    parser.add_argument("--stream-requests", type=int, default=1000, help="per tree, mode, round")
    parser.add_argument("--warmup", type=int, default=128)
    parser.add_argument("--stores", default="10000:one,100000:one,100000:spread")
    parser.add_argument("--quick", action="store_true", help="the 10k store, fewer requests")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "tenure-gateway-cost"
    )
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE (repeat)")
    args = parser.parse_args()
    if args.quick:
        args.stores, args.stream_requests, args.warmup = "10000:one", 400, 64
    return args


def main() -> None:
    args = options()
    args.cache.mkdir(parents=True, exist_ok=True)
    upstream, port = stand_in_upstream()
    waits = []
    try:
        with ExitStack() as checkouts:
            trees = {
                "baseline": checkouts.enter_context(checked_out(args.baseline)),
                "this": checkouts.enter_context(checked_out(args.this)) if args.this else REPO,
            }
            for spec in args.stores.split(","):
                size, layout = spec.split(":")
                users = LAYOUTS[layout]
                path = args.cache / f"store-{size}-{layout}.duckdb"
                build(path, int(size), users)
                label = f"{int(size):,} beliefs, {users:,} user(s)"
                with ExitStack() as stack:
                    gateways = {
                        name: stack.enter_context(gateway(tree, path, port, args.env))
                        for name, tree in trees.items()
                    }
                    asyncio.run(measure(gateways, users, args))
                waits.append((label, report(label, gateways, args)))
    finally:
        upstream.terminate()
        upstream.wait(timeout=30)
    print()
    for label, wait in waits:
        print(f"{'PASS' if wait <= 3.0 else 'MISS'}  {label}: durable wait p50 <= 3 ms  {wait:.2f}")


if __name__ == "__main__":
    main()
