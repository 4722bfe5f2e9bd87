"""One belief as the index holds it: its normalised tokens and its place in the pinned layer."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from beliefs.model.record import BeliefRecord
from beliefs.text.query import normalize_name

FUZZY_PREFIX = 2
PinnedKey = tuple[int, int, float, str]  # see `pinned_order`


def deletion_variants(term: str) -> set[str]:
    """`term` with one character removed, never touching the guarded prefix."""
    return {term[:i] + term[i + 1 :] for i in range(FUZZY_PREFIX, len(term))}


@dataclass(slots=True)
class IndexedDoc:
    belief: BeliefRecord
    canonical: str
    aliases: tuple[str, ...]  # its alias tokens, then its rejected alternatives' tokens
    alias_count: int = 0  # how many of `aliases` are aliases (the rest are rejected ones)
    domain: frozenset[str] | None = None  # stems of its own words, worked out when first asked
    proper: frozenset[str] | None = None  # words it writes as names, worked out when first asked
    # Its ranking bonus under the rules `weighed_by` (see `search.weigh`): worked out the first
    # time those rules weigh it, then read; a new belief version is a new doc, new rules a new
    # `weighed_by`, so neither needs clearing.
    weighed_by: object = None
    weight: float = 1.0

    @property
    def recency(self) -> float:
        """Minus the last reinforcement's timestamp: ties rank newest first (worked out when
        asked, for the few ranked beliefs, rather than held as a float by every belief)."""
        belief = self.belief
        return -(belief.last_reinforced_at or belief.updated_at).timestamp()


def pinned_order(doc: IndexedDoc) -> PinnedKey:
    """Where a pinned belief stands in the pinned layer: edited by the user first, then by
    trust, then the most recently reinforced (then by id, so the order is total)."""
    belief = doc.belief
    return (-int(belief.user_edited), -belief.trust, doc.recency, belief.id)


def index_doc(belief: BeliefRecord) -> IndexedDoc:
    # tokens interned: beliefs sharing an alias share its token, and a loaded belief's alias
    # strings are interned too, so a token written as it is indexed is that string
    tokens: dict[str, None] = {}
    for name in belief.aliases:
        token = normalize_name(name)
        if token:
            tokens.setdefault(sys.intern(token))
    alias_count = len(tokens)
    for name in belief.rejected_alternatives:
        token = normalize_name(name)
        if token:
            tokens.setdefault(sys.intern(token))
    aliases = tuple(tokens)
    if aliases == belief.names:  # its names written as indexed: one tuple serves
        aliases = belief.names
    return IndexedDoc(
        belief=belief,
        canonical=normalize_name(belief.canonical_name),
        aliases=aliases,
        alias_count=alias_count,
    )
