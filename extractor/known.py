"""The live beliefs a turn touched: injected into it, found by its text, named by the output."""

from __future__ import annotations

from collections.abc import Iterable

from beliefs.models import Belief
from beliefs.store import BeliefStore
from extractor.merge import referenced, visible_scopes
from extractor.schema import ExtractionOutput
from extractor.turn import Turn

MAX_TOUCHED = 30

_LIVE = "superseded_by IS NULL AND epistemic_status <> 'superseded' AND deleted_at IS NULL"


def touched_beliefs(store: BeliefStore, turn: Turn) -> list[Belief]:
    """Live beliefs of the user in the turn's scopes that were injected into it (for the prompt)."""
    return _visible(turn, _by_ids(store, turn.injected_ids))[:MAX_TOUCHED]


def known_beliefs(store: BeliefStore, turn: Turn, output: ExtractionOutput) -> list[Belief]:
    """Everything the merge must see: touched beliefs plus every id and name the output names."""
    ids, names = referenced(output)
    found = {b.id: b for b in _by_ids(store, [*turn.injected_ids, *ids])}
    if names:
        rows = store.execute(
            f"SELECT id FROM beliefs WHERE user_id = ? AND {_LIVE} "
            "AND list_contains(?, canonical_name) AND list_has_any(scope, ?)",
            [turn.user_id, sorted(names), visible_scopes(turn)],
        ).fetchall()
        found.update({b.id: b for b in _by_ids(store, [r[0] for r in rows])})
    return _visible(turn, found.values())


def _by_ids(store: BeliefStore, ids: Iterable[str]) -> list[Belief]:
    # The store's index mirrors every committed row; reading it costs no query.
    out = []
    for belief_id in dict.fromkeys(ids):
        belief = store.index.get(belief_id)
        if belief is not None:
            out.append(belief)
    return out


def _visible(turn: Turn, beliefs: Iterable[Belief]) -> list[Belief]:
    scopes = set(visible_scopes(turn))
    return [b for b in beliefs if b.user_id == turn.user_id and b.is_live and scopes & set(b.scope)]
