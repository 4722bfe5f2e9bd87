"""Start-up of `tenure serve` on a store of N beliefs: seconds to `/healthz`, seconds to the
first proxied request that carries memory, and the idle RSS once start-up work has settled.

Builds the store once into `--cache` (bench/scale.py's builder, bench/corpus.py's beliefs), then
for each run and each tree (this one, and `--base DIR` when given, alternately) starts the
stand-in provider's twin `tenure serve` on a fresh copy of the store and measures from launch.
Prints each run's figures and the medians per tree.

Run: `.venv/bin/python bench/startup_rss.py [--beliefs 100000] [--runs 3] [--base DIR]`.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gateway_latency import free_port, serve_env, stand_in_upstream
from bench.scale import Client, build, rss_mb, settle, wait_until

REPO = Path(__file__).resolve().parents[1]
FIGURES = ("healthz_s", "memory_s", "idle_rss_mb")


async def measure(process: subprocess.Popen[str], started: float, port: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    await wait_until(f"http://127.0.0.1:{port}/healthz", process, 300)
    figures["healthz_s"] = time.monotonic() - started
    async with aiohttp.ClientSession() as session:
        client = Client(session, 1)
        for i in itertools.count():
            _, injected = await client.call(f"http://127.0.0.1:{port}/v1", 0, record=False)
            if injected:
                break
            if time.monotonic() - started > 300:
                raise SystemExit("no memory within 300 s")
            await asyncio.sleep(0.05 if i < 200 else 0.5)
        figures["memory_s"] = time.monotonic() - started
    await settle(process.pid)
    figures["idle_rss_mb"] = rss_mb(process.pid)
    return figures


def run_once(tree: Path, store: Path, upstream_port: int) -> dict[str, float]:
    home = Path(tempfile.mkdtemp(prefix="tenure-startup-"))
    try:
        shutil.copy(store, home / "tenure.duckdb")
        port = free_port()
        env = serve_env(home, port, upstream_port, tree)
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "proxy.cli.main", "serve"], cwd=tree, env=env, text=True
        )
        try:
            return asyncio.run(measure(process, started, port))
        finally:
            process.terminate()
            process.wait(timeout=60)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beliefs", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--base", type=Path, help="another checkout to compare against")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "tenure-startup"
    )
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    store = args.cache / f"store-{args.beliefs}-one.duckdb"
    build(store, args.beliefs, 1)
    trees = {"head": REPO, **({"base": args.base.resolve()} if args.base else {})}
    upstream, upstream_port = stand_in_upstream()
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    try:
        for run in range(args.runs):
            names = list(trees) if run % 2 == 0 else list(trees)[::-1]
            for name in names:
                figures = run_once(trees[name], store, upstream_port)
                results[name].append(figures)
                shown = "  ".join(f"{k}={figures[k]:.1f}" for k in FIGURES)
                print(f"run {run + 1} {name}: {shown}", flush=True)
    finally:
        upstream.terminate()
        upstream.wait(timeout=30)
    for name, runs in results.items():
        if not runs:
            continue
        medians = "  ".join(f"{k}={statistics.median(r[k] for r in runs):.1f}" for k in FIGURES)
        print(f"{name} median of {len(runs)}: {medians}")


if __name__ == "__main__":
    main()
