"""Documents: ingest, re-ingest after a 10 % change, and passage retrieval at scale.

A generated folder of Markdown files (default 220 files, ~5 MB) is ingested into a fresh
store (passages/s), ingested again unchanged (must write nothing) and after 10 % of the files
changed (time as a ratio of the first ingest). Then context assembly p50 for one user at 10k
beliefs + 20k passages (turns in the docs scope, passages searched) against the same 10k
beliefs alone (no passage search): the target is at most 1.5x.
Run: `.venv/bin/python bench/ingest.py [--files 220] [--beliefs 10000] [--passages 20000]`.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from beliefs.context.assembly import ContextRequest, assemble
from beliefs.context.tokens import token_counter
from beliefs.documents import MIGRATIONS, DocumentFile, PassageFinder, cut, ingest
from beliefs.documents.sync import Where, passage_belief, passage_id
from beliefs.index.belief_index import BeliefIndex
from beliefs.model.models import Belief
from beliefs.opening import open_store
from bench.corpus import TECH, THINGS, make_corpus, make_queries

USER = "bench-user"
DOCS = "domain:docs/handbook"
SCOPES = ("domain:code", "project:billing", DOCS)


def words() -> list[str]:
    from wordfreq import top_n_list

    return [w for w in top_n_list("en", 6000) if w.isalpha() and len(w) > 2][:5000]


def make_file(rng: random.Random, vocab: list[str], i: int, sections: int = 19) -> str:
    tech = rng.choice(TECH)
    out = [f"# {tech.title()} {rng.choice(THINGS)} guide {i}", ""]
    for s in range(sections):
        out += [f"## {rng.choice(vocab).title()} {rng.choice(THINGS)} {s}", ""]
        for _ in range(rng.randint(2, 4)):
            sentence = [rng.choice(vocab) for _ in range(rng.randint(40, 70))]
            sentence.insert(rng.randrange(len(sentence)), rng.choice(TECH))
            out += [" ".join(sentence).capitalize() + ".", ""]
    return "\n".join(out)


def make_folder(root: Path, files: int, seed: int = 5) -> list[Path]:
    rng, vocab = random.Random(seed), words()
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(files):
        path = root / f"area-{i % 12}" / f"guide-{i:04d}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(make_file(rng, vocab, i), encoding="utf-8")
        paths.append(path)
    return paths


def change_tenth(paths: list[Path], seed: int = 9) -> int:
    """Edit one paragraph in each of 10 % of the files (and drop the last section of some)."""
    rng = random.Random(seed)
    chosen = rng.sample(paths, max(1, len(paths) // 10))
    for path in chosen:
        text = path.read_text(encoding="utf-8").split("\n\n")
        at = rng.randrange(2, len(text))
        text[at] = text[at] + " Changed on review by the operations team."
        if rng.random() < 0.3:
            text = text[: max(3, len(text) - 4)]
        path.write_text("\n\n".join(text), encoding="utf-8")
    return len(chosen)


def read(root: Path) -> list[DocumentFile]:
    out = []
    for path in sorted(root.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        out.append(DocumentFile(path.relative_to(root).as_posix(), text, "markdown", len(text)))
    return out


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def run_ingest(files: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        paths = make_folder(root, files)
        size = sum(p.stat().st_size for p in paths)
        store = open_store(Path(tmp) / "bench.duckdb")
        store.ensure_schema(MIGRATIONS)

        def go() -> object:
            return ingest(store, USER, "docs:handbook", read(root), root=str(root))

        first_s, first = timed(go)
        passages = sum(f.added for f in first.files)  # type: ignore[attr-defined]
        again_s, again = timed(go)
        changed = change_tenth(paths)
        sync_s, sync = timed(go)
        store.close()
    print(f"folder: {files} files, {size / 2**20:.1f} MiB, {passages} passages")
    print(f"first ingest: {first_s:.1f} s, {passages / first_s:.0f} passages/s")
    print(
        f"unchanged re-ingest: {again_s:.2f} s, wrote {again.written}"  # type: ignore[attr-defined]
    )
    print(
        f"re-ingest after {changed} files changed: {sync_s:.2f} s "
        f"({sync_s / first_s:.2f}x the first), wrote {sync.written}"  # type: ignore[attr-defined]
    )


def passages_for(count: int) -> list[Belief]:
    """`count` passage beliefs cut from generated files (no store: the index is measured)."""
    rng, vocab = random.Random(3), words()
    at = datetime(2026, 1, 1, tzinfo=UTC)
    out: list[Belief] = []
    i = 0
    while len(out) < count:
        text = make_file(rng, vocab, i)
        where = Where(USER, DOCS, f"s-bench-{i}", f"guide-{i:04d}.md", "e-bench", at)
        for passage in cut(text, "markdown"):
            out.append(passage_belief(where, passage, passage_id(where.source_id, passage)))
        i += 1
    return out[:count]


def run_retrieval(beliefs: int, passages: int, queries: int) -> None:
    count = token_counter()
    asked = make_queries(queries)
    plain = BeliefIndex()
    plain.load(make_corpus(beliefs))
    mixed = BeliefIndex()
    mixed.load(make_corpus(beliefs))
    mixed.load(passages_for(passages))
    finder = PassageFinder(mixed)
    gc.freeze()

    def run(index: BeliefIndex, with_passages: bool) -> Callable[[str], object]:
        def one(query: str) -> object:
            request = ContextRequest(USER, SCOPES, query, token_budget=4000)
            search = finder.for_turn if with_passages else None
            return assemble(index, request, count_tokens=count, passages=search)

        return one

    plain_run, mixed_run = run(plain, False), run(mixed, True)
    for query in asked[:20]:  # warm-up (the passage index is built on the first turn)
        plain_run(query)
        mixed_run(query)
    # Interleaved, query by query: load on a shared machine drifts, and both sides see it.
    times: dict[str, list[float]] = {"beliefs": [], "mixed": []}
    for query in asked:
        for name, fn in (("beliefs", plain_run), ("mixed", mixed_run)):
            started = time.perf_counter()
            fn(query)
            times[name].append((time.perf_counter() - started) * 1000)
    results = {name: statistics.median(values) for name, values in times.items()}
    ratio = results["mixed"] / results["beliefs"]
    print(
        f"retrieval p50: {beliefs} beliefs alone {results['beliefs']:.3f} ms; with {passages} "
        f"passages searched {results['mixed']:.3f} ms ({ratio:.2f}x, target <= 1.5x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=220)
    parser.add_argument("--beliefs", type=int, default=10_000)
    parser.add_argument("--passages", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--skip-ingest", action="store_true")
    args = parser.parse_args()
    if not args.skip_ingest:
        run_ingest(args.files)
    run_retrieval(args.beliefs, args.passages, args.queries)


if __name__ == "__main__":
    main()
