"""What search and context assembly return over the synthetic corpus, as plain data.

`tests/data/search_outcomes.json` holds these outcomes as the index and search stood before
postings were compacted and pruned (written by running this module on that code, and again
when matching rules changed): the
equivalence test compares today's outcomes with them. Run `python -m
tests.beliefs.search_outcomes OUT` to write the outcomes of the code on `sys.path`.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Any

from beliefs.context.assembly import ContextRequest, assemble
from beliefs.index.belief_index import BeliefIndex
from beliefs.model.models import Belief
from beliefs.search.matcher import search
from beliefs.text.query import parse_query
from bench.corpus import iter_corpus, make_queries

USER = "bench-user"
SIZE = 4000
QUERIES = 160
SHOWN = 30  # hits of an unlimited search kept whole; the rest by count and score sum
NOW = datetime(2026, 6, 1, tzinfo=UTC)
EXTRA_QUERIES = (
    "should we move the redis cache to postgres or keep kafka for the queue?",
    "Rewrite it in Go and ship the kubernetes operator",
    "which database do we use for billing",
    "the graphql gateway and the grpc proxy keep timing out",
    "deploy dashboards traces secrets",
)


def build() -> BeliefIndex:
    """Two users' beliefs, then churn: edits that change names and aliases, and removals,
    so postings go from one member to many and back."""
    index = BeliefIndex()
    index.load(iter_corpus(SIZE, user_id=USER))
    index.load(iter_corpus(SIZE // 4, user_id="other-user", seed=3))
    for i in range(0, SIZE, 7):
        index.remove(f"b-bench-{i}")
    for i in range(3, SIZE, 11):
        current = index.get(f"b-bench-{i}")
        if current is None:
            continue
        changed = current.model_copy(
            update={"aliases": [*current.aliases[1:], "redis", f"zz{i % 13}"]}
        )
        index.upsert(Belief.model_validate(changed.model_dump()))
    # a name on half the beliefs, too common to count alone; an everyday word on a quarter
    for i in range(1, SIZE, 2):
        current = index.get(f"b-bench-{i}")
        if current is not None:
            common = [*current.aliases, "acmecorp", *(["platform"] if i % 4 == 1 else [])]
            index.upsert(current.model_copy(update={"aliases": common}))
    return index


def _hit(hit: Any, with_clauses: bool) -> list[Any]:
    out: list[Any] = [hit.belief.id, round(hit.score, 6)]
    if with_clauses:
        out.append([[c.field, c.term, round(c.score, 6), c.match] for c in hit.clauses])
    return out


def outcomes() -> dict[str, Any]:
    index = build()
    queries = [
        f"{q} at acmecorp" if i % 3 == 0 else f"{q} on the platform" if i % 3 == 1 else q
        for i, q in enumerate(make_queries(QUERIES))
    ]
    queries += EXTRA_QUERIES
    out: dict[str, Any] = {"searches": [], "limited": [], "contexts": []}
    for query in queries:
        terms = parse_query(query)
        every = search(index, USER, terms, lambda b: True)
        shown = [_hit(h, i < 3) for i, h in enumerate(every[:SHOWN])]
        out["searches"].append([len(every), round(sum(h.score for h in every), 6), shown])
        coded = search(
            index, USER, terms, lambda b: "domain:code" in b.scope, min_score=6.0, limit=5
        )
        out["limited"].append([_hit(h, False) for h in coded])
        ctx = assemble(
            index,
            ContextRequest(USER, ("domain:code", "project:billing"), query, token_budget=4000),
            now=NOW,
        )
        out["contexts"].append(
            [[b.id for b in ctx.pinned], [h.belief.id for h in ctx.relevant], ctx.budget.as_dict()]
        )
    return out


if __name__ == "__main__":
    with open(sys.argv[1], "w") as f:
        json.dump(outcomes(), f, separators=(",", ":"))
