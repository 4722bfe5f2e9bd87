"""The live beliefs a turn touched: injected into it, found by its text, named by the output."""

from __future__ import annotations

from collections.abc import Iterable

from beliefs.models import Belief
from beliefs.query import parse_query
from beliefs.record import AnyBelief, as_belief
from beliefs.search import search
from beliefs.store import BeliefStore
from extractor.merge import referenced, visible_scopes
from extractor.schema import ExtractionOutput
from extractor.turn import Turn

MAX_TOUCHED = 30


def touched_beliefs(store: BeliefStore, turn: Turn) -> list[Belief]:
    """For the prompt: live beliefs of the user in the turn's scopes that were injected into it
    or that the turn's text finds (the same alias-weighted search retrieval uses)."""
    injected = _visible(turn, _by_ids(store, turn.injected_ids))
    scopes = set(visible_scopes(turn))

    def accept(belief: AnyBelief) -> bool:
        return belief.is_live and bool(scopes & set(belief.scope))

    text = f"{turn.user_message}\n{turn.assistant_message}"
    hits = search(store.index, turn.user_id, parse_query(text), accept, limit=MAX_TOUCHED)
    found = {b.id: b for b in injected}
    for hit in hits:
        found.setdefault(hit.belief.id, as_belief(hit.belief))
    return list(found.values())[:MAX_TOUCHED]


def known_beliefs(store: BeliefStore, turn: Turn, output: ExtractionOutput) -> list[Belief]:
    """Everything the merge must see: touched beliefs plus every id and name the output names."""
    ids, names = referenced(output)
    found = {b.id: b for b in _by_ids(store, [*turn.injected_ids, *ids])}
    for name in names:
        for belief in store.index.by_name(turn.user_id, name):
            if belief.canonical_name == name:
                found.setdefault(belief.id, belief)
    return _visible(turn, found.values())


def _by_ids(store: BeliefStore, ids: Iterable[str]) -> list[Belief]:
    # The store's index mirrors every committed row (reading it costs no query); the merge runs
    # before this job writes anything, so committed state is the current state.
    out = []
    for belief_id in dict.fromkeys(ids):
        belief = store.index.get(belief_id)
        if belief is not None:
            out.append(belief)
    return out


def _visible(turn: Turn, beliefs: Iterable[Belief]) -> list[Belief]:
    scopes = set(visible_scopes(turn))
    return [b for b in beliefs if b.user_id == turn.user_id and b.is_live and scopes & set(b.scope)]
