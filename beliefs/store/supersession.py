"""Supersession chains: a replacement supersedes a belief, a survivor merges several, a
hard delete relinks past the row it removes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from beliefs.model.chains import chain_of, check_supersede
from beliefs.model.errors import InvalidBelief
from beliefs.model.models import Belief, utcnow
from beliefs.store.belief_writes import BeliefWrites, validated
from beliefs.store.database import BeliefDatabase


class Supersession(BeliefWrites):
    """Changes that link rows: each stamps the old rows in the transaction that adds the new."""

    def chain(self, belief_id: str) -> list[Belief]:
        """The whole supersession chain containing the belief, oldest -> newest."""
        belief = self._require(belief_id)
        return chain_of(self._select("WHERE user_id = ?", [belief.user_id]), belief_id)

    def supersede(
        self,
        old_id: str,
        replacement: Belief,
        *,
        reason: str | None = None,
        actor: str = "operator",
        with_history: bool = True,
    ) -> Belief:
        """Insert `replacement`, then stamp the old row as superseded by it; one transaction.

        Raises:
            ChainError: the old belief is already superseded or deleted, or a cycle would form.
            CanonicalNameClash: another live belief (not the old one) has the replacement's name.
        """
        replacement = self._with_default_class(replacement)
        with self.transaction():
            old = self._require(old_id)
            check_supersede(old, replacement, self._links(old.user_id))
            if self._exists(replacement.id):
                raise InvalidBelief(f"belief id {replacement.id} already exists; use a new id")
            self._check_name(replacement, exclude=(old_id,))
            now = utcnow()
            row = self._insert(replacement)
            detail: dict[str, Any] = {"belief_id": old_id, "reason": reason}
            self._event(replacement.id, "supersedes", actor, detail)
            self._note_always_on(None, row, actor)
            stamped = validated(
                {
                    **old.model_dump(),
                    "superseded_by": replacement.id,
                    "epistemic_status": "superseded",
                    "invalidated_at": now,
                    "invalidation_reason": reason,
                    "updated_at": now,
                },
                old_id,
            )
            self._write(stamped)
            detail = {"belief_id": replacement.id, "reason": reason}
            self._event(old_id, "superseded_by", actor, detail)
        return self._returned(row, with_history)

    def merge(
        self,
        source_ids: Sequence[str],
        survivor: Belief,
        *,
        reason: str | None = None,
        actor: str = "operator",
        with_history: bool = True,
    ) -> Belief:
        """Insert `survivor`, then stamp every source as superseded by it; one transaction.

        Like `supersede` with several old rows: each source gets a link to the survivor (a
        chain that converges on one head), the survivor a `supersedes` event per source and
        one `merged_from` event listing them.

        Raises:
            InvalidBelief: fewer than two distinct sources, or the survivor's id exists.
            ChainError: a source is already superseded or deleted.
            CanonicalNameClash: a live belief other than the sources has the survivor's name.
        """
        ids = list(dict.fromkeys(source_ids))
        if len(ids) < 2:
            raise InvalidBelief(f"a merge needs at least two distinct beliefs, got {ids}")
        survivor = self._with_default_class(survivor)
        with self.transaction():
            olds = [self._require(i) for i in ids]
            links = self._links(olds[0].user_id)
            for old in olds:
                check_supersede(old, survivor, links)
            self._check_name(survivor, exclude=ids)
            now = utcnow()
            row = self._insert(survivor)
            for old in olds:
                self._event(
                    survivor.id, "supersedes", actor, {"belief_id": old.id, "reason": reason}
                )
                stamped = validated(
                    {
                        **old.model_dump(),
                        "superseded_by": survivor.id,
                        "epistemic_status": "superseded",
                        "invalidated_at": now,
                        "invalidation_reason": reason,
                        "updated_at": now,
                    },
                    old.id,
                )
                self._write(stamped)
                detail = {"belief_id": survivor.id, "reason": reason}
                self._event(old.id, "superseded_by", actor, detail)
            self._event(survivor.id, "merged_from", actor, {"belief_ids": ids, "reason": reason})
            self._note_always_on(None, row, actor)
        return self._returned(row, with_history)

    def hard_delete(self, belief_id: str, *, actor: str = "operator") -> None:
        """Remove the row for good; its history stays. Predecessors are relinked past it."""
        with self.transaction():
            old = self._require(belief_id)
            now = utcnow()
            for pred in self._select("WHERE superseded_by = ?", [belief_id]):
                relinked = pred.model_copy(
                    update={"superseded_by": old.superseded_by, "updated_at": now}
                )
                self._write(relinked)
                change = {"superseded_by": {"old": belief_id, "new": old.superseded_by}}
                detail = {"changes": change, "reason": f"{belief_id} was hard-deleted"}
                self._event(pred.id, "updated", actor, detail)
            self.flush()
            self.conn.execute("DELETE FROM beliefs WHERE id = ?", [belief_id])
            self._event(belief_id, "deleted", actor, {"hard": True})
            self._staged[belief_id] = None

    def _links(self, user_id: str) -> Mapping[str, str | None]:
        """The user's supersession links (id -> superseded_by), looked up as needed."""
        return _UserLinks(self, user_id)


class _UserLinks(Mapping[str, "str | None"]):
    """One user's `id -> superseded_by`, read from the store's view of its rows on demand.

    Checking a supersession follows a chain or two, so reading every row of the user (as a
    query would) is wasted work.
    """

    def __init__(self, store: BeliefDatabase, user_id: str) -> None:
        self.store = store
        self.user_id = user_id

    def __getitem__(self, belief_id: str) -> str | None:
        belief = self.store._current(belief_id)
        if belief is None or belief.user_id != self.user_id:
            raise KeyError(belief_id)
        return belief.superseded_by

    def __iter__(self) -> Iterator[str]:
        return iter([b.id for b in self._rows()])

    def __len__(self) -> int:
        return len(self._rows())

    def _rows(self) -> list[Belief]:
        return self.store._select("WHERE user_id = ?", [self.user_id])
