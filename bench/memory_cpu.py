"""CPU of one request's memory on the event loop, in process: the search against the rest.

Seeds a store of N beliefs (bench/corpus.py, as bench/forward_cost.py does), then assembles
memory the way the gateway does (`proxy.gateway.memory._assemble`, the injection record and
the turn-memory row included) for `--requests` turn texts, and reports µs of this thread's CPU
per request: in all, in the search (query parsing and `search`, timed by wrapping the names
assembly calls) and in everything else. `--profile FILE` writes cProfile stats of the loop.

Run: `.venv/bin/python bench/memory_cpu.py [--beliefs 10000] [--requests 3000]`.
"""

from __future__ import annotations

import argparse
import cProfile
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import beliefs.context.assembly as assembly
from beliefs.opening import open_store
from beliefs.search.deadline import Deadline
from bench.corpus import make_queries
from bench.gateway_latency import PERSONA, SCOPES, USER, seed
from proxy.gateway.delivery import context_request
from proxy.gateway.memory import _assemble
from proxy.settings import Settings


class Timed:
    """A function that adds the thread CPU time it takes to `spent`."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.spent = 0.0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return self.function(*args, **kwargs)
        finally:
            self.spent += time.thread_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beliefs", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--profile", help="write cProfile stats of the measured loop here")
    args = parser.parse_args()
    settings = Settings()
    scopes = tuple(SCOPES.split(","))
    queries = [f"{q} (turn {i})" for i, q in enumerate(make_queries(500))]
    with tempfile.TemporaryDirectory() as tmp:
        seed(Path(tmp), args.beliefs)
        with open_store(Path(tmp) / "tenure.duckdb") as store:
            requests = [
                context_request(
                    settings, user_id=USER, scopes=scopes, agent_id=None, query=q, model="gpt-4o"
                )
                for q in queries
            ]
            for request in requests:  # warm: standing layers, lines, token counts
                _assemble(store, request, PERSONA, None, Deadline(10.0))
            search, parse = Timed(assembly.search), Timed(assembly.parse_query)
            assembly.search, assembly.parse_query = search, parse  # type: ignore[assignment]
            profile = cProfile.Profile(time.thread_time) if args.profile else None
            started = time.thread_time()
            if profile is not None:
                profile.enable()
            for i in range(args.requests):
                _assemble(store, requests[i % len(requests)], PERSONA, None, Deadline(10.0))
            if profile is not None:
                profile.disable()
                profile.dump_stats(args.profile)
            total = time.thread_time() - started
    n = args.requests
    searching = search.spent + parse.spent
    print(f"µs CPU / request at {args.beliefs} beliefs ({n} requests)")
    print(f"  all        {total / n * 1e6:7.0f}")
    print(f"  search     {searching / n * 1e6:7.0f}  (parse {parse.spent / n * 1e6:.0f})")
    print(f"  the rest   {(total - searching) / n * 1e6:7.0f}")


if __name__ == "__main__":
    main()
