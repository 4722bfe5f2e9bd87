"""The live beliefs a turn touched: injected into it, found by its text, named by the output,
or pointed at by what the model proposed."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from beliefs.context.assembly import UNIVERSAL
from beliefs.context.citations import is_passage
from beliefs.model.models import Belief, normalize_canonical_name
from beliefs.model.record import AnyBelief, as_belief
from beliefs.search.matcher import search
from beliefs.store.belief_store import BeliefStore
from beliefs.text.query import parse_query
from extractor.merge import referenced, visible_scopes
from extractor.schema import ExtractionOutput, NewBelief
from extractor.turn import Turn

MAX_TOUCHED = 30


def touched_beliefs(store: BeliefStore, turn: Turn) -> list[Belief]:
    """For the prompt: live beliefs of the user in the turn's scopes that were injected into it
    or that the turn's text finds (the same alias-weighted search retrieval uses)."""
    injected = _visible(turn, _by_ids(store, turn.injected_ids) + carried(store, turn))
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
    found = {b.id: b for b in _by_ids(store, [*turn.injected_ids, *ids]) + carried(store, turn)}
    for name in names:
        for belief in store.index.by_name(turn.user_id, name):
            if belief.canonical_name == name:
                found.setdefault(belief.id, belief)
    return _visible(turn, found.values())


def pointed_beliefs(
    store: BeliefStore, turn: Turn, output: ExtractionOutput, shown: Collection[str]
) -> list[Belief]:
    """Live beliefs the output's new beliefs point at that the prompt did not show: the same
    canonical name, a name about the same subject (its first or last word: `primary_database`
    and `billing_database` or `database_postgres`), or one of the proposal's names among the
    belief's own names.

    "Billing now runs on CockroachDB" names no word of `primary_database` ("PostgreSQL 16"),
    so the turn's search misses it; what the model proposes for it does not.
    """
    proposals = [_Proposal.of(nb) for nb in output.new_beliefs]
    if not proposals:
        return []
    scopes = set(visible_scopes(turn))
    found: list[Belief] = []
    for record in store.index.records(turn.user_id):
        if record.id in shown or not record.is_live or not scopes & set(record.scope):
            continue
        names = {record.canonical_name, *(a.casefold() for a in record.aliases)}
        if any(p.points_at(record.canonical_name, names) for p in proposals):
            found.append(as_belief(record))
    return found[:MAX_TOUCHED]


class _Proposal:
    """A proposed new belief's canonical name, subject words and other names."""

    def __init__(self, name: str, names: set[str]) -> None:
        self.name = name
        self.subjects = _subjects(name)
        self.names = names

    @classmethod
    def of(cls, nb: NewBelief) -> _Proposal:
        try:
            name = normalize_canonical_name(nb.canonical_name)
        except ValueError:
            name = ""
        names = {n.casefold() for n in [*nb.aliases, *nb.rejected_alternatives] if n.strip()}
        return cls(name, names)

    def points_at(self, canonical_name: str, names: set[str]) -> bool:
        if self.name and canonical_name == self.name:
            return True
        if self.subjects & _subjects(canonical_name):
            return True
        return bool(self.names & names)


def _subjects(canonical_name: str) -> set[str]:
    # A snake_case name leads or ends with what it is about (`database_postgres`,
    # `primary_database`); "db" or "v2" say too little.
    words = canonical_name.split("_")
    return {w for w in (words[0], words[-1]) if len(w) > 2 and not w.isdigit()}


def carried(store: BeliefStore, turn: Turn) -> list[Belief]:
    """The beliefs the turn's persona reference stands for: the user's live pinned beliefs
    scoped to `user:universal` alone and to no agent (those a persona summarises). A job that
    lists them in `injected_ids` (written before the reference) has no reference."""
    if turn.persona is None or not turn.persona.carries:
        return []
    return [
        as_belief(record)
        for record in store.index.records(turn.user_id)
        if record.pinned
        and record.is_live
        and record.agent_id is None
        and list(record.scope) == [UNIVERSAL]
        and record.type != "open_question"
    ]


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
    return [
        b
        for b in beliefs
        if b.user_id == turn.user_id
        and b.is_live
        and scopes & set(b.scope)
        and not is_passage(b)  # a document's passage changes only by re-ingest
    ]
