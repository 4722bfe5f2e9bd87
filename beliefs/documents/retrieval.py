"""Finding passages for a turn: the passage index of each user, kept in step with the store.

A finder belongs to one store (`finder_for`) and follows its in-memory index: when a user's
beliefs change (`user_version`), the passages among them that are new or gone are added to or
taken from that user's passage index, so the words of a passage are read once.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from beliefs.context.assembly import ContextRequest, in_scopes
from beliefs.context.citations import citation, where
from beliefs.context.recall import RecallHit, recall_tags
from beliefs.documents.passage_index import PassageHit, PassageIndex
from beliefs.documents.sync import is_passage
from beliefs.model.models import utcnow
from beliefs.model.record import AnyBelief
from beliefs.search.matcher import Clause, Hit

if TYPE_CHECKING:
    from beliefs.index.belief_index import BeliefIndex
    from beliefs.store.database import BeliefDatabase

MAX_PASSAGES = 5  # passages a turn receives at most


class PassageFinder:
    """Passage search over one belief index."""

    def __init__(self, index: BeliefIndex) -> None:
        self._index = index
        self._lock = threading.Lock()
        self._users: dict[str, tuple[int, PassageIndex, dict[str, AnyBelief]]] = {}

    def user_index(self, user_id: str) -> PassageIndex:
        """The user's passage index, brought up to date with the belief index."""
        version = self._index.user_version(user_id)
        with self._lock:
            found = self._users.get(user_id)
            if found is not None and found[0] == version and version:
                return found[1]
            passages = PassageIndex() if found is None else found[1]
            held = {} if found is None else found[2]
            current = {r.id: r for r in self._index.records(user_id) if is_passage(r)}
            for gone in [bid for bid in held if bid not in current]:
                passages.discard(gone)
                del held[gone]
            for bid, record in current.items():
                if held.get(bid) is not record:
                    if record.is_live:
                        passages.add(record)
                    else:
                        passages.discard(bid)
                    held[bid] = record
            self._users[user_id] = (version, passages, held)
            return passages

    def search(
        self, user_id: str, query: str, accept: Callable[[AnyBelief], bool], limit: int
    ) -> list[PassageHit]:
        return self.user_index(user_id).search(query, accept, limit=limit)

    def for_turn(
        self,
        request: ContextRequest,
        ok: Callable[[AnyBelief], bool],
        scopes: Collection[str],
    ) -> list[Hit]:
        """Deliverable passages of the turn's scopes, as relevant hits (after memory)."""
        allowed = frozenset(scopes)

        def accept(belief: AnyBelief) -> bool:
            return in_scopes(belief, allowed) and ok(belief)

        passages = self.user_index(request.user_id)
        if not any(n > 0 and s in allowed for s, n in passages.scopes.items()):
            return []  # no documents in the turn's scopes: most turns
        return [_hit(p) for p in passages.search(request.query, accept, limit=MAX_PASSAGES)]

    def recall(
        self, user_id: str, query: str, *, scopes: Collection[str] = (), limit: int = MAX_PASSAGES
    ) -> list[RecallHit]:
        """Passages for an explicit recall: never gated by delivery controls or trust."""
        from beliefs.context.assembly import covering

        allowed = covering(tuple(scopes)) if scopes else None

        def accept(belief: AnyBelief) -> bool:
            return allowed is None or in_scopes(belief, allowed)

        now = utcnow()
        found = self.search(user_id, query, accept, limit)
        return [RecallHit(_hit(p), recall_tags(p.belief, now)) for p in found]


def cited(hit: Hit) -> dict[str, str]:
    """A passage's source and citation, for a recall answer (nothing for a belief)."""
    belief = hit.belief
    if not is_passage(belief):
        return {}
    return {"source": where(belief), "citation": citation(belief)}


def _hit(found: PassageHit) -> Hit:
    clauses = [Clause("passage", word, 0.0) for word in found.matched]
    return Hit(belief=found.belief, score=found.score, clauses=clauses)


_FINDERS: weakref.WeakKeyDictionary[object, PassageFinder] = weakref.WeakKeyDictionary()
_FINDERS_LOCK = threading.Lock()


def finder_for(store: BeliefDatabase) -> PassageFinder:
    """The store's passage finder, made on first use and gone with the store."""
    with _FINDERS_LOCK:
        found = _FINDERS.get(store)
        if found is None or found._index is not store.index:
            found = _FINDERS[store] = PassageFinder(store.index)
        return found
