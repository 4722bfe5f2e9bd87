"""Explicit recall: the same search, never gated by delivery controls.

Automatic injection hides `on_demand`, rejected, expired and below-trust beliefs and respects
`inject_scopes`; a recall the user or agent asks for sees them all (tagged), so nothing stored
is out of reach. Deleted beliefs are never returned; superseded ones only when asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from beliefs.context.assembly import in_scopes, weight_bound
from beliefs.index.belief_index import BeliefIndex
from beliefs.model.models import utcnow
from beliefs.model.record import AnyBelief
from beliefs.model.rules import RuleSet
from beliefs.search.matcher import MIN_SCORE, Hit, search
from beliefs.text.query import parse_query


@dataclass(frozen=True)
class RecallHit:
    hit: Hit
    tags: tuple[str, ...]  # why automatic injection would skip it, if it would


def recall_tags(belief: AnyBelief, now: datetime) -> tuple[str, ...]:
    tags = []
    if not belief.is_live:
        tags.append("superseded")
    if belief.resolved_at is not None:
        tags.append("resolved")
    if belief.review_state == "rejected":
        tags.append("rejected")
    if belief.expires_at is not None and belief.expires_at <= now:
        tags.append("expired")
    if belief.delivery == "on_demand":
        tags.append("on_demand")
    return tuple(tags)


def recall(
    index: BeliefIndex,
    user_id: str,
    query: str,
    *,
    scopes: Sequence[str] = (),
    agent_id: str | None = None,
    include_superseded: bool = False,
    limit: int = 20,
    rules: RuleSet | None = None,
    now: datetime | None = None,
) -> list[RecallHit]:
    now = now or utcnow()
    rules = rules or RuleSet()

    def accept(belief: AnyBelief) -> bool:
        return (
            (include_superseded or belief.is_live)
            and (agent_id is None or belief.seen_by(agent_id))
            and (not scopes or in_scopes(belief, scopes))
        )

    with index.lock:  # the weight bound holds for the beliefs this search reads
        hits = search(
            index,
            user_id,
            parse_query(query),
            accept,
            min_score=MIN_SCORE,
            weight=rules.weight if rules.has_bonuses else None,
            max_weight=weight_bound(index, user_id, rules),
            limit=limit,
            sense=False,  # asked for by name: every sense of the word is meant
        )
    return [RecallHit(h, recall_tags(h.belief, now)) for h in hits]
