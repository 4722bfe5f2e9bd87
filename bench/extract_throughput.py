"""Extraction throughput into a 10k-belief store, and the gateway's latency while it runs.

1. Jobs per second merged (claim -> prompt -> instant stand-in model -> merge -> one
   transaction -> done) into a store of `--beliefs` beliefs. The model is a fake `ChatModel`
   that answers at once with valid extraction JSON: a mix of new beliefs, reinforcements,
   alias enrichments and supersessions of existing beliefs. Target: >= 200 jobs/s.
2. The gateway's added latency while extraction drains a backlog: p50/p99 of chat requests
   through a real gateway (uvicorn, in a thread) to the stand-in provider (a subprocess), with
   the workers idle, then with `--backlog` jobs draining; reported as a ratio, same run.

Run: `.venv/bin/python bench/extract_throughput.py [--beliefs 10000] [--jobs 2000]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from beliefs.opening import open_store as open_belief_store  # noqa: E402
from beliefs.store.belief_store import BeliefStore  # noqa: E402
from beliefs.store.thread import StoreThread  # noqa: E402
from bench.corpus import SCOPES, make_corpus  # noqa: E402
from extractor.jobs import JobQueue  # noqa: E402
from extractor.llm import ModelCall, ModelReply  # noqa: E402
from extractor.modes import ModeBook  # noqa: E402
from extractor.turn import Turn  # noqa: E402
from extractor.worker import ExtractionWorkers  # noqa: E402
from proxy.runtime import extraction_config  # noqa: E402
from proxy.settings import Settings  # noqa: E402

USER = "bench-user"


class InstantModel:
    """A `ChatModel` answering at once with valid extraction JSON, varied per call."""

    def __init__(self, names: Sequence[str], seed: int = 3) -> None:
        self.names = list(names)
        self.rng = random.Random(seed)
        self.calls = 0
        self.modes = ModeBook()

    async def complete(self, call: ModelCall) -> ModelReply:
        self.calls += 1
        n, roll = self.calls, self.rng.random()
        out: dict[str, Any] = {
            "new_beliefs": [],
            "belief_updates": [],
            "entity_updates": [],
            "resolved_open_questions": [],
        }
        if roll < 0.5:
            out["new_beliefs"].append(
                {
                    "type": "decision",
                    "canonical_name": f"bench_new_{n}",
                    "content": f"Decided on option {n}.",
                    "why_it_matters": f"Prefer option {n} in suggestions.",
                    "aliases": [f"opt{n}"],
                    "rejected_alternatives": [f"alt{n}"],
                    "scope": [],
                    "confidence": 0.9,
                    "epistemic_status": "active",
                    "memory_class": None,
                    "participants": [],
                    "resolves_open_question": None,
                }
            )
        elif roll < 0.75:
            name = self.rng.choice(self.names)
            out["belief_updates"].append(
                {"belief_id": None, "canonical_name": name, "change": "reinforced"}
            )
        elif roll < 0.9:
            name = self.rng.choice(self.names)
            out["entity_updates"].append({"canonical_name": name, "new_aliases": [f"nick{n}"]})
        else:
            name = self.names.pop(self.rng.randrange(len(self.names)))
            out["belief_updates"].append(
                {
                    "belief_id": None,
                    "canonical_name": name,
                    "change": "superseded",
                    "new_content": f"Replaced in turn {n}.",
                    "reason": "moved on",
                }
            )
        return ModelReply(text=json.dumps(out), finish_reason="stop")


def turn(n: int, scope: str) -> Turn:
    return Turn(
        request_id=f"req-{n}",
        user_id=USER,
        scopes=[scope],
        model="stand-in-model",
        user_message=f"We settled the redis cache question in turn {n}; keep kafka for events.",
        assistant_message="Noted.",
    )


def settings(home: Path, **kw: Any) -> Settings:
    return Settings.load(environ={"TENURE_HOME": str(home)}, **kw)


def open_store(home: Path, n_beliefs: int) -> tuple[BeliefStore, list[str], str]:
    home.mkdir(parents=True, exist_ok=True)
    store = open_belief_store(home / "tenure.duckdb")
    corpus = make_corpus(n_beliefs, user_id=USER)
    store.import_beliefs(corpus)
    scope = SCOPES[2]  # project:billing: the merge sees the beliefs of this scope
    names = [b.canonical_name for b in corpus if scope in b.scope]
    return store, names, scope


async def throughput(home: Path, n_beliefs: int, n_jobs: int, workers: int) -> dict[str, Any]:
    store, names, scope = open_store(home, n_beliefs)
    thread = StoreThread(store)
    queue = JobQueue(store)
    model = InstantModel(names)
    config = extraction_config(settings(home, extract_workers=workers))
    runner = ExtractionWorkers(thread, queue, model, config)
    started = time.perf_counter()
    await thread.run(lambda: [queue.enqueue(turn(i, scope)) for i in range(n_jobs)])
    enqueue_s = time.perf_counter() - started
    started = time.perf_counter()
    await runner.drain()
    elapsed = time.perf_counter() - started
    counts = await thread.run(queue.counts)
    problems = await thread.run(store.verify)
    thread.close()
    store.close()
    return {
        "beliefs": n_beliefs,
        "jobs": n_jobs,
        "workers": workers,
        "enqueue_per_s": round(n_jobs / enqueue_s),
        "jobs_per_s": round(n_jobs / elapsed, 1),
        "ms_per_job": round(elapsed / n_jobs * 1000, 2),
        "counts": counts,
        "verify_problems": len(problems),
    }


# -- part 2: gateway latency while extraction runs ---------------------------------------------


def start_upstream() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.upstream"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    return proc, f"http://127.0.0.1:{port}/v1"


class Gateway:
    """The real app under uvicorn on its own loop and thread, with an injected model."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.app = app
        # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets that declare it,
        # and without it every response stalls ~40 ms on delayed ACKs.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_until_complete, args=(self.server.serve(sockets=[sock]),)
        )
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(30)


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def timed_requests(url: str, n: int, until: Any = None) -> list[float]:
    """`n` sequential chat requests, or as many as fit while `until()` is false (if given)."""
    import httpx

    body = {"model": "stand-in-model", "messages": [{"role": "user", "content": "redis cache?"}]}
    headers = {"X-Tenure-User": USER, "X-Tenure-Scope": SCOPES[2], "X-Tenure-No-Extract": "1"}
    out = []
    with httpx.Client(timeout=30) as client:
        while len(out) < n or (until is not None and not until()):
            if until is not None and until():
                break
            started = time.perf_counter()
            response = client.post(url, json=body, headers=headers)
            out.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, response.text
    return out


def gateway_latency(
    home: Path, n_beliefs: int, backlog: int, n_requests: int, workers: int
) -> dict[str, Any]:
    from proxy.app import create_app

    upstream, upstream_url = start_upstream()
    store, names, scope = open_store(home, n_beliefs)
    model = InstantModel(names)
    conf = settings(home, upstream_url=upstream_url, extract_workers=workers)
    gateway = Gateway(create_app(conf, store=store, llm=model))
    url = f"http://127.0.0.1:{gateway.port}/v1/chat/completions"
    try:
        timed_requests(url, 30)  # warm up
        idle = timed_requests(url, n_requests)
        done_before = model.calls
        asyncio.run_coroutine_threadsafe(_enqueue(gateway, backlog, scope), gateway.loop).result(60)
        busy_started = time.perf_counter()
        # Requests keep going for as long as the backlog drains (at least `n_requests`).
        busy = timed_requests(url, n_requests, until=lambda: model.calls - done_before >= backlog)
        busy_s = time.perf_counter() - busy_started
        processed = model.calls - done_before
    finally:
        gateway.stop()
        store.close()
        upstream.terminate()
        upstream.wait(10)
    p50_i, p99_i = statistics.median(idle), percentile(idle, 99)
    p50_b, p99_b = statistics.median(busy), percentile(busy, 99)
    return {
        "requests_idle": len(idle),
        "idle_p50_ms": round(p50_i, 2),
        "idle_p99_ms": round(p99_i, 2),
        "extracting_p50_ms": round(p50_b, 2),
        "extracting_p99_ms": round(p99_b, 2),
        "p50_ratio": round(p50_b / p50_i, 2),
        "p99_ratio": round(p99_b / p99_i, 2),
        "requests_while_extracting": len(busy),
        "jobs_extracted_during_busy_phase": processed,
        "extraction_rate_during_busy_phase": round(processed / busy_s, 1),
    }


async def _enqueue(gateway: Gateway, n: int, scope: str) -> None:
    """The backlog, written through the running gateway's own queue and store thread."""
    runtime = gateway.app.state.runtime
    jobs = runtime.jobs
    await runtime.thread.run(lambda: [jobs.enqueue(turn(i, scope)) for i in range(n)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--beliefs", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=2_000)
    parser.add_argument("--workers", type=int, default=16, help="concurrent extraction calls")
    parser.add_argument("--backlog", type=int, default=3_000)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--skip-gateway", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(throughput(Path(tmp) / "a", args.beliefs, args.jobs, args.workers))
        print(json.dumps({"throughput": result}, indent=2))
        if not args.skip_gateway:
            latency = gateway_latency(
                Path(tmp) / "b", args.beliefs, args.backlog, args.requests, args.workers
            )
            print(json.dumps({"gateway_latency": latency}, indent=2))


if __name__ == "__main__":
    main()
