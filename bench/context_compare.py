"""Context assembly for one user, this tree against a baseline tree, in one run.

Each tree's own `beliefs` package builds an index of `--size` synthetic beliefs in a process of
its own and assembles the context of the same 300 turns three times (the best round counts),
then the same 300 once more with the processor's caches cold before each (`cold`: what a turn
costs in a server, where other work runs between two turns), then 60 turns each right after a
write: of one of the same user's unpinned beliefs, and of another user's belief; the trees take
turns `--rounds` times, so a shared machine's noise falls on both.
Run: `.venv/bin/python bench/context_compare.py [--baseline main] [--size 300000] [--rounds 2]`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.worktree import checked_out, run_in  # noqa: E402

# Run inside each tree: prints {"p50": ms, "mean": ms, "p99": ms}.
MEASURE = """
import gc, json, statistics, sys, time
from beliefs.context.assembly import ContextRequest, assemble
from beliefs.index.belief_index import BeliefIndex
from beliefs.model.rules import DEFAULT_RULES, RuleSet
from beliefs.context.tokens import token_counter
from bench.corpus import iter_corpus, make_queries
index = BeliefIndex()
index.load(iter_corpus(int(sys.argv[1])))
gc.freeze()
count = token_counter()
queries = make_queries(300)
rules = RuleSet(DEFAULT_RULES)  # a store's rules from its first migration: their bonuses weigh
def run(q):
    request = ContextRequest("bench-user", ("domain:code", "project:billing"), q, token_budget=4000)
    assemble(index, request, persona="You prefer direct answers.", count_tokens=count, rules=rules)
for q in queries[:30]:
    run(q)
best = None
for _ in range(3):
    times = []
    for q in queries:
        started = time.perf_counter()
        run(q)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    figures = {"p50": times[150], "mean": statistics.mean(times), "p99": times[297]}
    best = figures if best is None else {k: min(best[k], v) for k, v in figures.items()}
# Cold: between two turns a server reads sockets, relays replies and writes records, and the
# processor's caches hold little of the index when the next turn comes. Before each turn this
# walks 32 MB and 200k small objects; the turn alone is timed.
junk, objects = bytearray(32 << 20), [{"n": i, "s": str(i)} for i in range(200_000)]
cold = []
for q in queries:
    sum(junk[::64])
    sum(o["n"] for o in objects[::3])
    started = time.perf_counter()
    run(q)
    cold.append((time.perf_counter() - started) * 1000)
cold.sort()
best["cold p50"], best["cold mean"] = cold[150], statistics.mean(cold)
del junk, objects
# The turn right after a write: of one of the same user's unpinned beliefs, then another user's.
from beliefs.model.models import Belief
docs = index.user("bench-user").docs.values()
first = next(d.belief for d in docs if not d.belief.pinned)
base = first.to_belief() if hasattr(first, "to_belief") else first
own, other = [], []
for i, q in enumerate(queries[:60]):
    index.upsert(base.model_copy(update={"content": f"changed {i}"}))
    started = time.perf_counter()
    run(q)
    own.append((time.perf_counter() - started) * 1000)
    index.upsert(Belief(user_id="someone-else", canonical_name=f"thing_{i}", aliases=["thing"]))
    started = time.perf_counter()
    run(queries[100 + i])
    other.append((time.perf_counter() - started) * 1000)
best["own write p50"] = sorted(own)[30]
best["other write p50"] = sorted(other)[30]
print(json.dumps(best))
"""


def measure(tree: Path, size: int) -> dict[str, float]:
    return run_in(tree, MEASURE, str(size))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--size", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"baseline": [], "this": []}
    with checked_out(args.baseline) as where:
        for _ in range(args.rounds):
            runs["baseline"].append(measure(where, args.size))
            runs["this"].append(measure(REPO, args.size))
    print(f"{args.size:,} beliefs, one user, {args.rounds} round(s) each; median of the rounds")
    print(f"  {'':15} {'baseline':>10} {'this':>10} {'ratio':>7}")
    for key in ("p50", "mean", "p99", "cold p50", "cold mean", "own write p50", "other write p50"):
        base = statistics.median(r[key] for r in runs["baseline"])
        this = statistics.median(r[key] for r in runs["this"])
        print(f"  {key:15} {base:9.3f}ms {this:9.3f}ms {this / base:7.2f}")


if __name__ == "__main__":
    main()
