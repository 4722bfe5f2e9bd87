"""Finding beliefs for the API: the proxy's own retrieval for `q`, and a prefix match over
canonical names, aliases and rejected alternatives for type-ahead (`prefix=true`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from beliefs.index.belief_index import BeliefIndex
from beliefs.model.record import AnyBelief
from beliefs.search.matcher import search
from beliefs.text.query import normalize_name, parse_query


@dataclass(frozen=True)
class Filters:
    """The list filters, applied to beliefs in memory exactly as the store applies them."""

    user_id: str | None = None
    scope: str | None = None
    agent_id: str | None = None
    type: str | None = None
    status: str | None = None
    pinned: bool | None = None
    review_state: str | None = None
    include_superseded: bool = False

    def accepts(self, belief: AnyBelief) -> bool:
        checks: tuple[tuple[Any, Any], ...] = (
            (self.user_id, belief.user_id),
            (self.agent_id, belief.agent_id),
            (self.type, belief.type),
            (self.status, belief.epistemic_status),
            (self.pinned, belief.pinned),
            (self.review_state, belief.review_state),
        )
        if any(wanted is not None and wanted != actual for wanted, actual in checks):
            return False
        if self.scope is not None and self.scope.strip().lower() not in belief.scope:
            return False
        superseded = belief.superseded_by is not None or belief.epistemic_status == "superseded"
        return self.include_superseded or not superseded


@dataclass(frozen=True)
class Found:
    belief: AnyBelief
    match: dict[str, Any]


def text_search(
    index: BeliefIndex, users: Iterable[str], q: str, filters: Filters, limit: int
) -> list[Found]:
    """What the proxy's retrieval finds for `q` (alias-weighted BM25 over names), best first."""
    terms = parse_query(q)
    found: list[Found] = []
    for user in users:
        for hit in search(index, user, terms, filters.accepts, limit=limit):
            match = {
                "score": round(hit.score, 4),
                "clauses": [clause.as_dict() for clause in hit.clauses],
            }
            found.append(Found(hit.belief, match))
    found.sort(key=lambda f: (-float(f.match["score"]), f.belief.id))
    return found[:limit]


def prefix_search(
    index: BeliefIndex, users: Iterable[str], q: str, filters: Filters, limit: int
) -> list[Found]:
    """Beliefs with a name or alias (or one of its words) starting with `q`, best first:
    whole-name matches before word matches, canonical names before aliases, short before long."""
    prefix = normalize_name(q)
    if not prefix:
        return []
    ranked: list[tuple[tuple[int, int, str], Found]] = []
    for user in users:
        for belief in index.records(user):
            if not filters.accepts(belief):
                continue
            best = _best_name(belief, prefix)
            if best is not None:
                rank, field, name = best
                match = {"field": field, "term": name}
                ranked.append(((rank, len(name), belief.id), Found(belief, match)))
    ranked.sort(key=lambda pair: pair[0])
    return [found for _, found in ranked[:limit]]


def _best_name(belief: AnyBelief, prefix: str) -> tuple[int, str, str] | None:
    names: list[tuple[str, str]] = [("canonical_name", belief.canonical_name)]
    names += [("alias", a) for a in belief.aliases]
    names += [("rejected_alternative", r) for r in belief.rejected_alternatives]
    best: tuple[int, str, str] | None = None
    for order, (field, name) in enumerate(names):
        token = normalize_name(name)
        if token.startswith(prefix):
            rank = 0 if order == 0 else 1
        elif any(word.startswith(prefix) for word in token.split()[1:]):
            rank = 2 if order == 0 else 3
        else:
            continue
        if best is None or rank < best[0]:
            best = (rank, field, name)
    return best
