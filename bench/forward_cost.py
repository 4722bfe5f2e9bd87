"""CPU per proxied request, incognito and with memory, of this tree against another, in one
interleaved run.

Seeds one store of N beliefs (bench/corpus.py), starts the stand-in provider and a `tenure
serve` per tree (each on its own copy of the store, at the default log level so the access line
is written), then alternates phases: for each round, each mode (`incognito`: the
`X-Tenure-Incognito` pass-through; `memory`: persona, pinned and relevant beliefs placed) and
each tree, `--requests` requests (four times as many incognito: the CPU clock ticks
in 10 ms) from `--workers` clients, reading the proxy's CPU time from
/proc before and after. Prints the median (min–max) µs per request and, with `--base`, the
ratio of this tree's median to the base tree's.

Run: `.venv/bin/python bench/forward_cost.py [--base DIR] [--beliefs 10000] [--profile FILE]
[--reply FILE]`,
where DIR holds another checkout of the project (e.g. `git archive main | tar -x -C DIR`).
`--profile` runs this tree's proxy under cProfile and writes its stats at shutdown: the event
loop thread's to FILE, each other thread's to FILE.<thread name>.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import make_queries
from bench.gateway_latency import Load, cpu_seconds, drain, free_port, seed, wait_healthy
from bench.worktree import compiled

REPO = Path(__file__).resolve().parents[1]
# `tenure serve` leaves through os._exit: the stats are written on the way out, one file per
# thread (the event loop's as FILE, each other thread's as FILE.<thread name>). The clock is
# each thread's CPU time: a busy machine's preemptions are not the proxy's cost.
_PROFILED = """
import cProfile, os, runpy, sys, threading, time
profiles, leave = {{}}, os._exit
def profiled(name):
    profile = profiles.setdefault(name, cProfile.Profile(time.thread_time))
    profile.enable()
def on_thread_start(frame, event, arg):
    sys.setprofile(None)
    profiled(threading.current_thread().name)
def dump_and_leave(code):
    for name, profile in profiles.items():
        profile.disable()
        profile.dump_stats({out!r} + ("" if name == "MainThread" else "." + name))
    leave(code)
os._exit = dump_and_leave
threading.setprofile(on_thread_start)
sys.argv = ["tenure", "serve"]
profiled("MainThread")
runpy.run_module("proxy.cli.main", run_name="__main__")
"""
MODES = {"incognito": {"X-Tenure-Incognito": "1"}, "memory": {}}


def start_proxy(
    tree: Path, home: Path, upstream_port: int, env: dict[str, str], profile: str | None
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proxy_env = {
        **env,
        "PYTHONPATH": str(tree),
        "TENURE_HOME": str(home),
        "TENURE_PORT": str(port),
        "TENURE_UPSTREAM_URL": f"http://127.0.0.1:{upstream_port}/v1",
        "TENURE_EXTRACT_WORKERS": "0",
    }
    command = [sys.executable, "-m", "proxy.cli.main", "serve"]
    if profile:
        command[1:3] = ["-c", _PROFILED.format(out=profile)]
    log = open(home / "serve.log", "wb")  # noqa: SIM115 - closed with the process
    process = subprocess.Popen(command, cwd=tree, env=proxy_env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    wait_healthy(f"{base}/healthz", process)  # type: ignore[arg-type]
    wait_loaded(f"{base}/healthz", process)
    return process, base + "/v1"


def wait_loaded(url: str, process: subprocess.Popen[bytes]) -> None:
    """Until the index holds the store: before that a memory request searches nothing (and
    under `--profile` loading takes several times longer than the warm-up)."""
    deadline = time.monotonic() + 600
    while json.loads(urllib.request.urlopen(url, timeout=5).read()).get("loading"):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{url}: the index did not load")
        time.sleep(0.1)


def thread_seconds(pid: int) -> dict[str, float]:
    """CPU seconds (user + system) of each of a process's threads by thread id, the event
    loop's (the main thread's) as "loop" (the OS knows no Python thread names)."""
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        name = "loop" if task.name == str(pid) else f"thread {task.name}"
        out[name] = (int(fields[11]) + int(fields[12])) / tick
    return out


async def phase(load: Load, pid: int, base: str, requests: int, workers: int) -> dict[str, float]:
    """The proxy's CPU µs per request over `requests` calls from `workers` clients, until it
    has written what they left (the records and jobs held to share a later commit are theirs):
    in all ("") and per thread (threads that ended meanwhile count in all only)."""
    counter = iter(range(requests))

    async def worker() -> None:
        for i in counter:
            await load.call(i)

    before, threads = cpu_seconds(pid), thread_seconds(pid)
    await asyncio.gather(*(worker() for _ in range(workers)))
    await drain(load.session, base)
    after = thread_seconds(pid)
    used = {n: (t - threads.get(n, 0.0)) / requests * 1e6 for n, t in after.items()}
    return {"": (cpu_seconds(pid) - before) / requests * 1e6, **used}


async def measure(
    proxies: dict[str, tuple[int, str]], args: argparse.Namespace
) -> dict[tuple[str, str], list[float]]:
    queries = make_queries(500)
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=2)
    results: dict[tuple[str, str], list[float]] = {}
    threads: dict[tuple[str, str, str], list[float]] = {}
    async with aiohttp.ClientSession(connector=connector) as session:
        loads = {
            (name, mode): Load(session, base, queries, headers)
            for name, (_, base) in proxies.items()
            for mode, headers in MODES.items()
            if mode in args.modes.split(",")
        }
        for (name, _), load in loads.items():
            for i in range(args.warmup):
                await load.call(i)
            await drain(session, proxies[name][1])
        names = list(proxies)
        for round_ in range(args.rounds):
            order = names if round_ % 2 == 0 else names[::-1]
            for mode in args.modes.split(","):
                for name in order:
                    pid, base = proxies[name]
                    count = args.requests if mode == "memory" else args.requests * 4
                    used = await phase(loads[name, mode], pid, base, count, args.workers)
                    results.setdefault((name, mode), []).append(used.pop(""))
                    for thread, value in used.items():
                        threads.setdefault((name, mode, thread), []).append(value)
            print(f"round {round_ + 1}/{args.rounds} done", flush=True)
    if args.threads:
        print(f"\n{'tree':8} {'mode':10} {'thread':24} {'median':>8}  µs CPU / request")
        for (name, mode, thread), values in sorted(threads.items()):
            if statistics.median(values) >= 20:
                print(f"{name:8} {mode:10} {thread:24} {statistics.median(values):8.0f}")
    return results


def report(results: dict[tuple[str, str], list[float]], names: list[str]) -> None:
    print(f"\n{'tree':8} {'mode':10} {'median':>8} {'min':>8} {'max':>8}  µs CPU / request")
    for (name, mode), values in results.items():
        print(
            f"{name:8} {mode:10} {statistics.median(values):8.0f} "
            f"{min(values):8.0f} {max(values):8.0f}"
        )
    if "base" in names:
        for mode in {mode for _, mode in results}:
            head = statistics.median(results["head", mode])
            base = statistics.median(results["base", mode])
            print(f"{mode}: head / base = {head / base:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="another checkout to compare against")
    parser.add_argument("--beliefs", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--modes", default="incognito,memory")
    parser.add_argument("--profile", help="write this tree's proxy cProfile stats here")
    parser.add_argument("--threads", action="store_true", help="also print CPU per thread")
    parser.add_argument(
        "--reply",
        type=Path,
        help="the provider's answer, from this file (tests/fixtures/replies/ holds some)",
    )
    args = parser.parse_args()
    if args.base and compiled(REPO) != compiled(args.base):
        print("note: one tree's retrieval is compiled and the other's is not", file=sys.stderr)

    with tempfile.TemporaryDirectory() as tmp:
        homes = {"head": Path(tmp) / "head"}
        if args.base:
            homes["base"] = Path(tmp) / "base"
        homes["head"].mkdir()
        print(f"seeding {args.beliefs} beliefs …", flush=True)
        seed(homes["head"], args.beliefs)
        if args.base:
            shutil.copytree(homes["head"], homes["base"])
        env = {k: v for k, v in os.environ.items() if not k.startswith("TENURE_")}
        reply = [] if args.reply is None else ["0", str(args.reply.resolve())]
        upstream = subprocess.Popen(
            [sys.executable, "-m", "tests.fakes.upstream", *reply],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
        )
        assert upstream.stdout is not None
        upstream_port = int(upstream.stdout.readline())
        processes: dict[str, subprocess.Popen[bytes]] = {}
        try:
            proxies: dict[str, tuple[int, str]] = {}
            for name, home in homes.items():
                tree = REPO if name == "head" else args.base.resolve()
                profile = args.profile if name == "head" else None
                processes[name], base = start_proxy(tree, home, upstream_port, env, profile)
                proxies[name] = (processes[name].pid, base)
            started = time.monotonic()
            results = asyncio.run(measure(proxies, args))
            print(f"measured in {time.monotonic() - started:.0f} s")
        finally:
            for process in [*processes.values(), upstream]:
                process.send_signal(signal.SIGINT if process is not upstream else signal.SIGTERM)
                process.wait(timeout=60)
        report(results, list(homes))


if __name__ == "__main__":
    main()
