"""One belief as the index holds it: its normalised tokens and its place in the pinned layer."""

from __future__ import annotations

import sys
from typing import Any

from beliefs.model.record import BeliefRecord, reinforced_seconds, spaced_name
from beliefs.text.query import name_forms, normalize_name

FUZZY_PREFIX = 2
PinnedKey = tuple[int, int, float, str]  # see `pinned_order`


def deletion_variants(term: str) -> set[str]:
    """`term` with one character removed, never touching the guarded prefix."""
    return {term[:i] + term[i + 1 :] for i in range(FUZZY_PREFIX, len(term))}


class IndexedDoc:
    """A belief's tokens, and what search works out about it once asked (`domain`, `proper`,
    `weighed_by`, `weight` and `figures`: held together, and only by the beliefs a search has
    weighed).

    One slot holds how many of its tokens are aliases while nothing is worked out, and the
    list of what is, with that count last, once something is: 8 bytes a belief fewer."""

    __slots__ = ("_state", "aliases", "belief", "canonical")

    def __init__(
        self,
        belief: BeliefRecord,
        canonical: str,
        aliases: tuple[str, ...],  # its alias tokens, then its rejected alternatives' tokens
        alias_count: int = 0,  # how many of `aliases` are aliases (the rest are rejected ones)
    ) -> None:
        self.belief = belief
        self.canonical = canonical
        self.aliases = aliases
        # or [domain, proper, weighed_by, weight, figures, count]
        self._state: int | list[Any] = alias_count

    @property
    def alias_count(self) -> int:
        """How many of `aliases` are aliases (the rest are rejected alternatives)."""
        state = self._state
        if type(state) is list:
            return int(state[_COUNT])
        return state  # type: ignore[return-value]

    @property
    def worked_out(self) -> bool:
        """Whether a search has worked anything out about it (and holds it)."""
        return type(self._state) is list

    def _get(self, at: int) -> Any:
        state = self._state
        if type(state) is list:
            return state[at]
        return _UNWORKED[at]

    def _set(self, at: int, value: Any) -> None:
        state = self._state
        if type(state) is not list:
            state = self._state = [*_UNWORKED, state]
        state[at] = value

    @property
    def domain(self) -> frozenset[str] | None:
        """Stems of its own words, worked out when first asked."""
        return self._get(0)  # type: ignore[no-any-return]

    @domain.setter
    def domain(self, value: frozenset[str] | None) -> None:
        self._set(0, value)

    @property
    def proper(self) -> frozenset[str] | None:
        """Words it writes as names, worked out when first asked."""
        return self._get(1)  # type: ignore[no-any-return]

    @proper.setter
    def proper(self, value: frozenset[str] | None) -> None:
        self._set(1, value)

    # Its ranking bonus under the rules `weighed_by` (see `search.weigh`): worked out the first
    # time those rules weigh it, then read; a new belief version is a new doc, new rules a new
    # `weighed_by`, so neither needs clearing.
    @property
    def weighed_by(self) -> object:
        return self._get(2)

    @weighed_by.setter
    def weighed_by(self, value: object) -> None:
        self._set(2, value)

    @property
    def weight(self) -> float:
        return self._get(3)  # type: ignore[no-any-return]

    @weight.setter
    def weight(self, value: float) -> None:
        self._set(3, value)

    @property
    def figures(self) -> frozenset[str] | None:
        """The figures its own text and rejected alternatives write, worked out when first
        asked (`search.corroboration.shares_figure`)."""
        return self._get(4)  # type: ignore[no-any-return]

    @figures.setter
    def figures(self, value: frozenset[str] | None) -> None:
        self._set(4, value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IndexedDoc):
            return NotImplemented
        return _fields(self) == _fields(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"IndexedDoc({self.belief!r}, {self.canonical!r}, {self.aliases!r})"

    @property
    def recency(self) -> float:
        """Minus the last reinforcement's timestamp: ties rank newest first (worked out when
        asked, for the few ranked beliefs, rather than held as a float by every belief)."""
        belief = self.belief
        if type(belief) is BeliefRecord:
            return -reinforced_seconds(belief)
        return -(belief.last_reinforced_at or belief.updated_at).timestamp()


_UNWORKED: tuple[Any, ...] = (None, None, None, 1.0, None)
_COUNT = len(_UNWORKED)  # where a worked-out state holds the alias count


def _fields(doc: IndexedDoc) -> tuple[Any, ...]:
    worked_out = tuple(doc._get(at) for at in range(_COUNT))
    return (doc.belief, doc.canonical, doc.aliases, doc.alias_count, worked_out)


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
        for token in name_forms(name):
            tokens.setdefault(sys.intern(token))
    alias_count = len(tokens)
    for name in belief.rejected_alternatives:
        for token in name_forms(name):
            tokens.setdefault(sys.intern(token))
    aliases = tuple(tokens)
    # its names written as indexed: one tuple serves (a record's; a model's are lists)
    if isinstance(belief, BeliefRecord) and aliases == belief.names:
        aliases = belief.names
    # a record holds a snake_case name as it is indexed: the token is that string
    spaced = spaced_name(belief) if isinstance(belief, BeliefRecord) else None
    return IndexedDoc(
        belief=belief,
        canonical=spaced or normalize_name(belief.canonical_name),
        aliases=aliases,
        alias_count=alias_count,
    )
