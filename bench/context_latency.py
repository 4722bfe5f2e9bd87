"""Context assembly latency (p50, p99) at 1k, 10k and 100k beliefs for one user.

Baselines, measured in the same run: the same filters and scoring done by a linear scan over
the user's beliefs (what a store without an index would do), and the index matching as the
reference does (no stems, kind words or corroboration: `ref p50`). Ratios are indexed / scan
and extended / reference. `--semantic` also times semantic recall (the 'semantic' extra) and
reports what it adds: the time to embed the corpus once, per-turn latency and memory.
Run: `.venv/bin/python bench/context_latency.py [--sizes 1000,10000,100000] [--queries 300]`.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from beliefs.context.assembly import ContextRequest, assemble
from beliefs.context.tokens import token_counter
from beliefs.index.belief_index import BeliefIndex
from beliefs.index.indexed_doc import index_doc
from beliefs.model.record import BeliefRecord
from beliefs.search.matcher import within_one_edit
from beliefs.text.query import parse_query
from bench.corpus import make_corpus, make_queries

SCOPES = ("domain:code", "project:billing")
MODEL = False  # `--model`: the relevance model keeps the hits instead of the rules
PERSONA = "You prefer direct answers without preamble and push back when plans have problems."


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def linear_scan(beliefs: list, query: str) -> int:
    """Baseline: match every belief's names against the query terms, no index."""
    terms = parse_query(query)
    words = set(terms.words) | set(terms.phrases) | set(terms.canonical_phrases)
    found = 0
    for belief in beliefs:
        doc = index_doc(belief)
        if doc.canonical in words:
            found += 1
            continue
        for token in doc.aliases:
            if any(w[:2] == token[:2] and within_one_edit(w, token) is not None for w in words):
                found += 1
                break
    return found


def measure(fn, queries: list[str]) -> list[float]:
    times = []
    for query in queries:
        started = time.perf_counter()
        fn(query)
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--baseline-queries", type=int, default=30)
    parser.add_argument("--semantic", default="", help="sizes to time semantic recall at")
    parser.add_argument("--model", action="store_true", help="time the relevance model")
    args = parser.parse_args()
    global MODEL
    MODEL = args.model
    queries = make_queries(args.queries)
    count = token_counter()
    print(
        f"{'beliefs':>8} {'p50 ms':>8} {'p99 ms':>8} {'mean':>7} {'hits':>5} "
        f"{'scan p50':>9} {'ratio p50':>9} {'ref p50':>8} {'ext/ref':>7} {'load s':>7}"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        run_size(size, queries, args.baseline_queries, count)
    for size in (int(s) for s in args.semantic.split(",") if s):
        run_semantic(size, queries[:100], count)


def run_semantic(size: int, queries: list[str], count) -> None:
    """Semantic recall's own cost: embedding the corpus, per-turn latency added, memory."""
    import tracemalloc

    from beliefs.index.encoder import load_encoder
    from beliefs.index.semantic import enable

    index = BeliefIndex()
    index.load(make_corpus(size))
    tracemalloc.start()
    encoder = load_encoder()
    weights = tracemalloc.get_traced_memory()[0]
    semantic = enable(index, encoder)

    def run(query: str) -> None:
        assemble(index, ContextRequest("bench-user", SCOPES, query), count_tokens=count)

    started = time.perf_counter()
    run(queries[0])  # embeds every belief once
    embed_s = time.perf_counter() - started
    vectors = tracemalloc.get_traced_memory()[0] - weights
    tracemalloc.stop()
    with_semantic = measure(run, queries)
    index.semantic = None
    index.derived.clear()
    measure(run, queries[:10])
    without = measure(run, queries)
    on, off = percentile(with_semantic, 50), percentile(without, 50)
    print(
        f"semantic at {size}: p50 {on:.2f} ms vs {off:.3f} ms without (+{on - off:.2f} ms), "
        f"p99 {percentile(with_semantic, 99):.2f} ms; embedding {len(semantic)} beliefs "
        f"took {embed_s:.1f} s; memory: model {weights / 2**20:.0f} MiB, "
        f"vectors and matrix {vectors / 2**20:.1f} MiB"
    )


def run_size(size: int, queries: list[str], baseline_queries: int, count) -> None:
    corpus = make_corpus(size)
    started = time.perf_counter()
    index = BeliefIndex()
    index.load(corpus)
    load_s = time.perf_counter() - started
    gc.freeze()  # as the server does after loading: the mirror is long-lived
    hits: list[int] = []

    def run(query: str) -> None:
        ctx = assemble(
            index,
            ContextRequest("bench-user", SCOPES, query, token_budget=4000),
            persona=PERSONA,
            count_tokens=count,
        )
        hits.append(len(ctx.relevant))

    # Each pass meets turns it has not seen: a user's turns are new text, and the index keeps
    # what it worked out for a word or phrase it has met (`stem_matches`, the alias terms).
    others = make_queries(len(queries) + 40, seed=12)
    index.reference_only = True
    measure(run, others[-20:])  # warm-up
    reference = measure(run, others[: len(queries)])
    index.reference_only = False
    index.relevance_model = MODEL
    measure(run, others[-40:-20])  # warm-up
    hits.clear()
    times = measure(run, queries)
    records = [BeliefRecord.of(b) for b in corpus]  # as the index holds them
    scan = measure(lambda q: linear_scan(records, q), queries[:baseline_queries])
    p50, p99, scan50 = percentile(times, 50), percentile(times, 99), percentile(scan, 50)
    ref50 = percentile(reference, 50)
    print(
        f"{size:>8} {p50:>8.3f} {p99:>8.3f} {statistics.mean(times):>7.3f} "
        f"{statistics.mean(hits):>5.1f} {scan50:>9.2f} {p50 / scan50:>9.4f} {ref50:>8.3f} "
        f"{p50 / ref50:>7.2f} {load_s:>7.2f}"
    )


if __name__ == "__main__":
    main()
