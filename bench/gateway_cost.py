"""Gateway cost: the gateway's CPU per request beside a bare pass-through proxy, with and
without memory, as the store grows; and how long a streamed reply's end waits to be durable.

Starts the stand-in provider, a bare aiohttp pass-through proxy written here (the floor: what
forwarding costs in Python at all) and, for each store, `tenure serve` on a copy of it (stores
of 10k and 100k beliefs for one user, 100k over 1,000 users, and with `--million` 1M for one
user; built once with `bench/corpus.py`'s corpus into `--cache`). The load comes from this
process: `--workers` concurrent connections, each request a new turn. Interleaved rounds of

- floor: the pass-through proxy;
- incognito: Tenure with `X-Tenure-Incognito: 1` (forwarding only);
- memory: Tenure with memory (retrieval, placement, the injection record and the extraction job,
  all of it counted until the gateway's writes are done);

measure the CPU (user + system, all threads) of the serving process per request, read from
`/proc/<pid>/stat` until it is idle again (work a load leaves behind counts as its own). Then
`--streams` concurrent streaming clients measure each reply's end: the time from the last event
before the final one to the final one, which the gateway holds until the turn is durable (with
memory) or relays at once (incognito); the difference of the p50s is the durable wait. Last,
the journal alone: `--streams` threads appending one job at a time to a job journal in a
temporary directory, each append's wait (its write and the sync that covers it).

Targets: memory/incognito <= 2x at 10k, <= 3x at 100k, <= 5x at 1M; incognito <= 1.2x the
floor; durable wait p50 <= 3 ms at 64 concurrent streams.

Run: `.venv/bin/python bench/gateway_cost.py [--quick] [--million] [--rounds 5]`; `--env
TENURE_DURABLE_WAIT_S=0` sets the gateway's settings (there: reply ends that do not wait).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import make_queries
from bench.gateway_latency import (
    SCOPES,
    body,
    cpu_seconds,
    free_port,
    serve_env,
    stand_in_upstream,
    wait_healthy,
)
from bench.gateway_report import percentile
from bench.scale import LAYOUTS, USER, build
from bench.turn_write import turn_items
from extractor.jobs import pending_job
from extractor.journal import JobJournal
from proxy.gateway.side_calls import SeenMessages

REPO = Path(__file__).resolve().parents[1]
MODES = ("floor", "incognito", "memory")
# Headers a proxy does not pass on (hop-by-hop, or set again by the client library).
HOP = frozenset(
    {"host", "connection", "keep-alive", "transfer-encoding", "content-length", "te", "upgrade"}
)
TARGETS = {10_000: 2.0, 100_000: 3.0, 1_000_000: 5.0}


def floor_app(origin: str) -> web.Application:
    """The floor: every request passed to `origin` as it came, the reply relayed as it comes."""

    async def session(app: web.Application) -> Any:
        connector = aiohttp.TCPConnector(limit=0)
        app["session"] = aiohttp.ClientSession(connector=connector, auto_decompress=False)
        yield
        await app["session"].close()

    async def forward(request: web.Request) -> web.StreamResponse:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP}
        async with request.app["session"].request(
            request.method, origin + request.path_qs, data=await request.read(), headers=headers
        ) as upstream:
            reply = web.StreamResponse(
                status=upstream.status,
                headers={k: v for k, v in upstream.headers.items() if k.lower() not in HOP},
            )
            await reply.prepare(request)
            try:
                async for chunk in upstream.content.iter_any():
                    await reply.write(chunk)
                await reply.write_eof()
            except ConnectionError:  # the client hung up
                pass
            return reply

    app = web.Application()
    app.cleanup_ctx.append(session)
    app.router.add_route("*", "/{tail:.*}", forward)
    return app


@dataclass
class Store:
    size: int
    layout: str
    cpu: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in MODES})
    injected: list[int] = field(default_factory=list)
    requests_with_memory: int = 0
    timeouts: int = 0
    ends: dict[str, list[float]] = field(default_factory=lambda: {"incognito": [], "memory": []})
    not_durable: int = 0

    @property
    def label(self) -> str:
        users = LAYOUTS[self.layout]
        return f"{self.size:,} beliefs, {users:,} user{'s' if users > 1 else ''}"


class Client:
    """Requests from this process; each one a new turn, a spread store's rotating over users."""

    def __init__(self, session: aiohttp.ClientSession, users: int) -> None:
        self.session = session
        self.users = users
        self.queries = make_queries(500)
        self.serial = itertools.count()

    def headers(self, i: int, mode: str) -> dict[str, str]:
        user = USER if self.users == 1 else f"{USER}-{(i * 7919) % self.users}"
        headers = {"X-Tenure-User": user, "X-Tenure-Scope": SCOPES, "Authorization": "Bearer sk-b"}
        if mode == "incognito":
            headers["X-Tenure-Incognito"] = "1"
        return headers

    def body(self, i: int, *, stream: bool = False) -> bytes:
        n = next(self.serial)
        return body(f"{self.queries[n % len(self.queries)]} (turn {n})", stream=stream)

    async def call(self, base: str, i: int, mode: str) -> int:
        """One request; the beliefs it carried (`X-Tenure-Injected`)."""
        async with self.session.post(
            base + "/chat/completions", data=self.body(i), headers=self.headers(i, mode)
        ) as resp:
            await resp.read()
            assert resp.status == 200, resp.status
            return int(resp.headers.get("x-tenure-injected", "0"))

    async def stream_end(self, base: str, i: int, mode: str) -> float:
        """Seconds between the last two events of a streamed reply."""
        times = []
        async with self.session.post(
            base + "/chat/completions",
            data=self.body(i, stream=True),
            headers=self.headers(i, mode),
        ) as resp:
            assert resp.status == 200, resp.status
            while line := await resp.content.readline():
                if line.startswith(b"data:"):
                    times.append(time.perf_counter())
        return times[-1] - times[-2]


async def gather(workers: int, total: int, one: Any) -> list[Any]:
    counter = iter(range(total))
    out: list[Any] = []

    async def worker() -> None:
        for i in counter:
            out.append(await one(i))

    await asyncio.gather(*(worker() for _ in range(workers)))
    return out


async def health(session: aiohttp.ClientSession, gateway: str) -> dict[str, Any]:
    async with session.get(gateway + "/healthz") as resp:
        return dict(await resp.json())


async def drained(session: aiohttp.ClientSession, gateway: str) -> None:
    """Until the gateway has written every record and job it queued (they count too); asked ten
    times a second, as `/healthz` asks the store twice (about 1.3 ms of the gateway's CPU)."""
    deadline = time.monotonic() + 300
    while (await health(session, gateway))["pending_writes"] and time.monotonic() < deadline:
        await asyncio.sleep(0.1)


async def ready(client: Client, gateway: str, pid: int) -> None:
    """Until requests carry memory, the index is loaded and start-up work has stopped."""
    deadline = time.monotonic() + 900
    while not await client.call(gateway + "/v1", 0, "memory"):
        if time.monotonic() > deadline:
            raise SystemExit("no memory within 15 minutes")
        await asyncio.sleep(0.2)
    while (await health(client.session, gateway)).get("loading"):
        await asyncio.sleep(0.2)
    await idle(pid)


async def idle(pid: int) -> None:
    """Until the process has stopped working (background work a load left behind is its cost)."""
    while True:
        before = cpu_seconds(pid)
        await asyncio.sleep(0.25)
        if cpu_seconds(pid) - before < 0.01:
            return


async def cpu_round(
    client: Client, store: Store, bases: dict[str, str], pids: dict[str, int], args: Any, n: int
) -> None:
    """One round: each mode's load in turn (the order rotates), CPU per request of its server."""
    gateway = bases["memory"].removesuffix("/v1")
    order = MODES[n % 3 :] + MODES[: n % 3]
    for mode in order:
        before = cpu_seconds(pids[mode])
        injected = await gather(
            args.workers, args.requests, lambda i, m=mode: client.call(bases[m], i, m)
        )
        if mode != "floor":
            await drained(client.session, gateway)
        await idle(pids[mode])
        store.cpu[mode].append((cpu_seconds(pids[mode]) - before) / args.requests * 1e6)
        if mode == "memory":
            store.injected.extend(injected)


async def measure(store: Store, floor: str, port: int, pids: dict[str, int], args: Any) -> None:
    gateway = f"http://127.0.0.1:{port}"
    bases = {"floor": floor, "incognito": gateway + "/v1", "memory": gateway + "/v1"}
    connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=2)
    async with aiohttp.ClientSession(connector=connector) as session:
        client = Client(session, LAYOUTS[store.layout])
        await ready(client, gateway, pids["memory"])
        for mode in MODES:
            await gather(args.workers, args.warmup, lambda i, m=mode: client.call(bases[m], i, m))
        await drained(session, gateway)
        counters = (await health(session, gateway))["counters"]
        for n in range(args.rounds):
            await cpu_round(client, store, bases, pids, args, n)
        after = (await health(session, gateway))["counters"]
        store.timeouts = after["retrieval_timeouts"] - counters["retrieval_timeouts"]
        store.requests_with_memory = len(store.injected)
        for n in range(2):
            for mode in ("incognito", "memory") if n % 2 == 0 else ("memory", "incognito"):
                store.ends[mode] += await gather(
                    args.streams,
                    args.stream_requests // 2,
                    lambda i, m=mode: client.stream_end(bases[m], i, m),
                )
                await drained(session, gateway)
        final = (await health(session, gateway))["counters"]
        store.not_durable = final.get("turns_not_durable", 0) - after.get("turns_not_durable", 0)


def serve(store: Store, path: Path, upstream: int, floor: subprocess.Popen[str], args: Any) -> None:
    home = Path(tempfile.mkdtemp(prefix="tenure-cost-"))
    try:
        shutil.copy(path, home / "tenure.duckdb")
        port = free_port()
        env = serve_env(home, port, upstream)
        env.update(dict(pair.split("=", 1) for pair in args.env))
        process = subprocess.Popen(
            [sys.executable, "-m", "proxy.cli.main", "serve"], cwd=REPO, env=env, text=True
        )
        try:
            wait_healthy(f"http://127.0.0.1:{port}/healthz", process)
            pids = {"floor": floor.pid, "incognito": process.pid, "memory": process.pid}
            floor_base = f"http://127.0.0.1:{args.floor_port}/v1"
            asyncio.run(measure(store, floor_base, port, pids, args))
        finally:
            process.terminate()
            process.wait(timeout=60)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def journal_waits(appenders: int, appends: int) -> tuple[float, list[float]]:
    """Appends per second and each append's wait, `appenders` threads at once."""
    seen = SeenMessages()
    jobs = []
    for n in range(appenders * appends):
        turn = turn_items(n, seen, "journal")[1].job_turn()
        assert turn is not None
        jobs.append(pending_job(turn))
    waits: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        journal = JobJournal(Path(tmp) / "journal")

        def appender(first: int) -> None:
            for job in jobs[first : first + appends]:
                began = time.perf_counter()
                journal.append([job])
                waits.append(time.perf_counter() - began)

        threads = [threading.Thread(target=appender, args=(i * appends,)) for i in range(appenders)]
        began = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - began
        journal.close()
    return len(jobs) / elapsed, waits


def spread(values: list[float]) -> str:
    return f"{min(values):6.0f} – {statistics.median(values):6.0f} – {max(values):6.0f}"


def report(store: Store, args: Any) -> list[tuple[str, bool, str]]:
    """Print one store's figures; its checks against the targets."""
    median = {mode: statistics.median(store.cpu[mode]) for mode in MODES}
    print(f"\n{store.label}: CPU per request, µs (min – median – max of {args.rounds} rounds)")
    names = {
        "floor": "floor (aiohttp pass-through)",
        "incognito": "Tenure, incognito",
        "memory": "Tenure, with memory",
    }
    for mode in MODES:
        print(f"  {names[mode]:30} {spread(store.cpu[mode])}")
    with_memory = median["memory"] / median["incognito"]
    forwarding = median["incognito"] / median["floor"]
    none = sum(1 for n in store.injected if n == 0)
    print(f"  memory / incognito {with_memory:.2f}, incognito / floor {forwarding:.2f}")
    print(
        f"  beliefs per request {statistics.mean(store.injected):.1f} (without any: {none} of "
        f"{len(store.injected)}); retrieval time-outs {store.timeouts}"
    )
    ends = {mode: [x * 1000 for x in values] for mode, values in store.ends.items()}
    p50 = {mode: percentile(values, 50) for mode, values in ends.items()}
    wait = p50["memory"] - p50["incognito"]
    print(
        f"  reply end at {args.streams} concurrent streams, p50 / p99 ms: incognito "
        f"{p50['incognito']:.2f} / {percentile(ends['incognito'], 99):.2f}, with memory "
        f"{p50['memory']:.2f} / {percentile(ends['memory'], 99):.2f}; durable wait p50 "
        f"{wait:.2f} ms; replies not durable in time: {store.not_durable}"
    )
    target = TARGETS[store.size]
    return [
        (f"{store.label}: memory/incognito <= {target:g}", with_memory <= target, with_memory),
        (f"{store.label}: incognito/floor <= 1.2", forwarding <= 1.2, forwarding),
        (f"{store.label}: durable wait p50 <= 3 ms", wait <= 3.0, wait),
    ]


def serve_floor(args: argparse.Namespace) -> None:
    web.run_app(
        floor_app(args.serve_floor),
        host="127.0.0.1",
        port=args.floor_port,
        print=None,
        access_log=None,
    )


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests: about 2 minutes")
    parser.add_argument("--million", action="store_true", help="also 1M beliefs (one user)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=1000, help="per mode and round")
    parser.add_argument("--workers", type=int, default=64, help="concurrent connections")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--streams", type=int, default=64, help="concurrent streaming clients")
    parser.add_argument("--stream-requests", type=int, default=2000)
    parser.add_argument("--journal-appends", type=int, default=50, help="per thread")
    parser.add_argument("--stores", default="10000:one,100000:one,100000:spread")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "tenure-gateway-cost"
    )
    parser.add_argument(
        "--env", action="append", default=[], help="KEY=VALUE for the gateway (repeat)"
    )
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--serve-floor", metavar="ORIGIN", help=argparse.SUPPRESS)
    parser.add_argument("--floor-port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.requests, args.warmup, args.stream_requests = 3, 300, 64, 512
    if args.million:
        args.stores += ",1000000:one"
    return args


def main() -> None:
    args = options()
    if args.serve_floor:
        serve_floor(args)
        return
    args.cache.mkdir(parents=True, exist_ok=True)
    upstream, upstream_port = stand_in_upstream()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENURE_")}
    args.floor_port = free_port()
    origin = f"http://127.0.0.1:{upstream_port}"
    floor = subprocess.Popen(
        [sys.executable, __file__, "--serve-floor", origin, "--floor-port", str(args.floor_port)],
        cwd=REPO,
        env=env,
        text=True,
    )
    stores: list[Store] = []
    try:
        wait_healthy(f"http://127.0.0.1:{args.floor_port}/v1/models", floor)
        for spec in args.stores.split(","):
            size, layout = spec.split(":")
            store = Store(int(size), layout)
            path = args.cache / f"store-{store.size}-{layout}.duckdb"
            print(f"{store.label}: building …" if not path.exists() else store.label, flush=True)
            build(path, store.size, LAYOUTS[layout])
            serve(store, path, upstream_port, floor, args)
            stores.append(store)
    finally:
        for process in (floor, upstream):
            process.terminate()
            process.wait(timeout=30)
    checks = [check for store in stores for check in report(store, args)]
    rate, waits = journal_waits(args.streams, args.journal_appends)
    print(
        f"\njournal alone, {args.streams} threads appending: {rate:.0f} appends/s, wait p50 "
        f"{percentile(waits, 50) * 1000:.2f} ms, p99 {percentile(waits, 99) * 1000:.2f} ms"
    )
    print()
    for name, ok, figure in checks:
        print(f"{'PASS' if ok else 'MISS'}  {name:52} {figure:.2f}")
    if args.out:
        args.out.write_text(json.dumps([store.__dict__ for store in stores], indent=1))


if __name__ == "__main__":
    main()
