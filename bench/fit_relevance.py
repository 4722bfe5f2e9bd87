"""Fit the relevance model's weights on the training corpora and freeze them.

Every candidate the name matching finds for a training case (the beliefs its words reach,
among those the case's user and scopes may see) is one example: relevant when the case expects
it, not otherwise. A logistic model with an L2 penalty is fitted by Newton's method; the
threshold is the logit that maximises F-beta over the training candidates (the frozen
weights: beta 1). The development corpora (`bench.corpora.DEVELOPMENT`) are only reported,
the test corpora never read.
Run: `.venv/bin/python bench/fit_relevance.py [--l2 1.0] [--beta 1.0] [--write]`; `--write`
rewrites `beliefs/search/relevance_weights.py`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from beliefs.context.assembly import UNIVERSAL, ContextRequest, covering, deliverable, in_scopes
from beliefs.model.record import AnyBelief
from beliefs.opening import open_store
from beliefs.search.features import FEATURES
from beliefs.search.matcher import model_candidates
from beliefs.search.relevance import Model, kept
from beliefs.store.interchange import read_file
from beliefs.text.query import parse_query
from bench.corpora import Corpus, corpora

WEIGHTS_FILE = (
    Path(__file__).resolve().parent.parent / "beliefs" / "search" / "relevance_weights.py"
)
Example = tuple[list[float], bool]


def examples(corpus: Corpus) -> list[Example]:
    """(features, relevant) of every candidate of every case of `corpus`."""
    everything = Model(tuple(0.0 for _ in FEATURES), -math.inf)
    cases = json.loads(corpus.cases.read_text())
    out: list[Example] = []
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "f.duckdb") as store:
        for path in corpus.beliefs:
            store.import_beliefs(read_file(str(path)))
        index = store.index
        for case in cases:
            want = ((case.get("expect") or {}).get("relevantBeliefs") or {}).get(
                "shouldOnlyInclude"
            )
            if want is None:
                continue
            scopes = tuple(case.get("scope") or [])
            request = ContextRequest(case["userId"], scopes, case["query"])
            allowed = covering((*scopes, UNIVERSAL))

            def accept(
                belief: AnyBelief, request: ContextRequest = request, allowed: Any = allowed
            ) -> bool:
                return (
                    belief.type != "open_question"
                    and not belief.pinned
                    and deliverable(belief, request, now)
                    and in_scopes(belief, allowed)
                )

            terms = parse_query(case["query"])
            if terms.empty:
                continue
            with index.lock:
                postings = index.user(case["userId"])
                if not postings.docs:
                    continue
                prescores, m = model_candidates(postings, terms)
                docs = postings.docs

                def taken(bid: str, docs: Any = docs, accept: Any = accept) -> bool:
                    return bool(accept(docs[bid].belief))

                for bid, verdict in kept(m, prescores, taken, None, model=everything):
                    out.append(([v for _, v in verdict.features], bid in want))
    return out


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    """Logistic regression weights (L2 on all but the bias) by Newton's method."""
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[0] = 1e-6
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + penalty * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def best_threshold(z: np.ndarray, y: np.ndarray, beta: float) -> float:
    """The logit cut with the best F-beta over the candidates (midway between two logits):
    beta below 1 weighs precision more, as a wrong belief in context costs more than a
    missing one."""
    order = np.sort(np.unique(z))
    best, cut = -1.0, 0.0
    for lo, hi in zip(order, [*order[1:], order[-1] + 1.0], strict=True):
        t = (lo + hi) / 2.0
        keep = z >= t
        tp = float((keep & y).sum())
        b2 = beta * beta
        total = b2 * y.sum() + keep.sum()
        f1 = (1 + b2) * tp / total if total else 0.0
        if f1 > best:
            best, cut = f1, t
    return cut


def report(name: str, z: np.ndarray, y: np.ndarray, cut: float) -> None:
    keep = z >= cut
    tp = float((keep & y).sum())
    precision = tp / keep.sum() if keep.sum() else 1.0
    recall = tp / y.sum() if y.sum() else 1.0
    print(
        f"{name:<12} candidates {len(y):>5}  relevant {int(y.sum()):>4}  "
        f"precision {precision:.3f}  recall {recall:.3f} (of the candidates' relevant)"
    )


def write(
    weights: np.ndarray, cut: float, l2: float, beta: float, count: int, names: list[str]
) -> None:
    lines = [
        '"""Frozen weights of the relevance model (`beliefs.search.relevance`).',
        "",
        f"Fitted by `python bench/fit_relevance.py --l2 {l2} --beta {beta} --write`",
        f"on {datetime.now(UTC):%Y-%m-%d}, from {count} candidates of the training corpora",
        *textwrap.wrap(f"({', '.join(names)}). Do not edit by hand: fit again.", 96),
        '"""',
        "",
        "WEIGHTS = {",
        *(f'    "{name}": {value:.6f},' for name, value in zip(FEATURES, weights, strict=True)),
        "}",
        f"THRESHOLD = {cut:.6f}",
        "",
    ]
    WEIGHTS_FILE.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--beta", type=float, default=1.0)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    train: list[Example] = []
    dev: list[Example] = []
    names: list[str] = []
    for corpus in corpora():
        if corpus.split == "training":
            train += examples(corpus)
            names.append(corpus.name)
        elif corpus.split == "development":
            dev += examples(corpus)
    x = np.array([f for f, _ in train])
    y = np.array([r for _, r in train])
    w = fit(x, y, args.l2)
    cut = best_threshold(x @ w, y, args.beta)
    report("training", x @ w, y, cut)
    xd = np.array([f for f, _ in dev])
    yd = np.array([r for _, r in dev])
    report("development", xd @ w, yd, cut)
    for name, value in sorted(zip(FEATURES, w, strict=True), key=lambda p: -abs(p[1])):
        print(f"  {name:<24} {value:+.3f}")
    print(f"  threshold {cut:+.3f}")
    if args.write:
        write(w, cut, args.l2, args.beta, len(train), names)


if __name__ == "__main__":
    main()
