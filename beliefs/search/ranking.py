"""Ranking scored candidates: the best `limit` by (weighted) score without sorting them all,
and fusion with the semantic index's neighbours."""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Callable, Iterator

from beliefs.index.belief_index import BeliefIndex
from beliefs.index.indexed_doc import IndexedDoc
from beliefs.index.semantic import Neighbour, fuse
from beliefs.model.record import AnyBelief
from beliefs.search.deadline import Deadline, passed
from beliefs.search.hits import Clause, Hit
from beliefs.text.query import QueryTerms

DEADLINE_STRIDE = 64  # candidates weighed between looks at the clock


def neighbours(
    index: BeliefIndex,
    user_id: str,
    terms: QueryTerms,
    accept: Callable[[AnyBelief], bool],
    known: dict[str, bool],
    docs: dict[str, IndexedDoc],
    named: bool,
) -> list[Neighbour]:
    """The semantic index's neighbours of the turn that `accept` lets through (lock held)."""
    assert index.semantic is not None

    def ok(doc: IndexedDoc) -> bool:
        verdict = known.get(doc.belief.id)
        return accept(doc.belief) if verdict is None else verdict

    ordered = list(docs.values())
    key = (user_id, index.user_version(user_id))
    return index.semantic.neighbours(key, ordered, terms, ok, named=named)


def fused(hits: list[Hit], neighbours: list[Neighbour], limit: int | None) -> list[Hit]:
    """Name matches and embedding neighbours in one list by reciprocal rank fusion."""
    if not neighbours:
        return hits
    by_id = {h.belief.id: h for h in hits}
    similarity = {doc.belief.id: (doc, cos, shared) for doc, cos, shared in neighbours}
    order = fuse([h.belief.id for h in hits], list(similarity))
    out: list[Hit] = []
    for bid in order:
        hit = by_id.get(bid)
        if bid in similarity:
            doc, cos, shared = similarity[bid]
            why = None if shared is None else f"shared word {shared!r}"
            clause = Clause("semantic", f"cosine {cos:.3f}", cos, "semantic", why)
            if hit is None:
                hit = Hit(doc.belief, cos, [clause])
            else:
                hit = Hit(hit.belief, hit.score, [*hit.clauses, clause], relevance=hit.relevance)
        assert hit is not None
        out.append(hit)
    return out[:limit] if limit is not None else out


def ranked(
    scores: dict[str, float], min_score: float, limit: int | None
) -> Iterator[tuple[float, str]]:
    """Candidates best first (ties by id), in rounds: most callers need few, so each round
    finds its score cut among the bare scores (a sort of floats) and pairs up only the
    candidates above it, 4 × `limit` the first time and four times more each next."""
    if limit is None or len(scores) <= 4 * limit:
        pairs = sorted((-s, bid) for bid, s in scores.items() if s >= min_score)
        for negated, bid in pairs:
            yield -negated, bid
        return
    order = sorted(-s for s in scores.values() if s >= min_score)  # best first
    above = float("inf")  # scores from here up were given in an earlier round
    taken = 0
    step = 4 * limit
    while taken < len(order):
        cut = -order[min(len(order), taken + step) - 1]
        pairs = sorted((-s, bid) for bid, s in scores.items() if cut <= s < above)
        taken = bisect_right(order, -cut)  # ties at the cut came in whole
        for score, bid in pairs:
            yield -score, bid
        above = cut
        step *= 4


def unweighted(bid: str) -> float:
    return 1.0


def best_weighted(
    scores: dict[str, float],
    factor: Callable[[str], float],
    max_factor: float,
    min_score: float,
    limit: int,
    taken: Callable[[str], bool],
    deadline: Deadline | None = None,
) -> list[tuple[float, str]]:
    """The best `limit` candidates `taken` lets through by weighted score (score × factor,
    at least `min_score`), best first, ties by id: what weighing every candidate and ranking
    them all gives, without weighing them all.

    Candidates are weighed in order of their bare score, and the walk stops at the first
    whose bare score × `max_factor` (the most any factor is) falls below the `limit`-th best
    weighted score taken so far: neither it nor any after it can rank among the best. A turn
    matching thousands of beliefs weighs a few hundred. (Equal bare scores share that bound,
    so the order among them does not matter: the taken are ranked by weighted score and id.)
    Past `deadline` (checked every `DEADLINE_STRIDE` candidates), the walk stops.
    """
    pool: list[tuple[float, str]] = []  # (-weighted score, id) of the candidates taken
    best: list[float] = []  # the `limit` best weighted scores taken, the least first (a heap)
    reach = min_score / max_factor  # a bare score below this cannot reach `min_score`
    for seen, bid in enumerate(sorted(scores, key=scores.__getitem__, reverse=True)):
        score = scores[bid]
        if score < reach or (len(best) >= limit and score * max_factor < best[0]):
            break
        if seen % DEADLINE_STRIDE == DEADLINE_STRIDE - 1 and passed(deadline):
            break
        weighted = score * factor(bid)
        if weighted < min_score or not taken(bid):
            continue
        pool.append((-weighted, bid))
        if len(best) < limit:
            heapq.heappush(best, weighted)
        elif weighted > best[0]:
            heapq.heapreplace(best, weighted)
    pool.sort()
    return [(-w, bid) for w, bid in pool[:limit]]


def rank_key(entry: tuple[float, str, IndexedDoc, float]) -> tuple[float, float, str]:
    return entry[0], entry[2].recency, entry[1]
