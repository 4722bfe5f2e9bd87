"""A belief's history and the store as it stood at a past moment."""

from __future__ import annotations

import copy
from datetime import datetime

from beliefs.model.errors import BeliefNotFound
from beliefs.model.models import Belief, HistoryEvent, as_utc
from beliefs.model.timeline import beliefs_as_of
from beliefs.store.database import BeliefDatabase
from beliefs.store.rows import SELECT_EVENTS, event_from_row


class BeliefHistory(BeliefDatabase):
    """Reads of the append-only event log: one belief's history, one user's past."""

    def history(self, belief_id: str) -> list[HistoryEvent]:
        """Every event of the belief, oldest first; kept after a hard delete."""
        events = self._events([belief_id]).get(belief_id, [])
        if not events and not self._exists(belief_id):
            raise BeliefNotFound(
                f"no belief with id {belief_id!r}; `tenure beliefs list` shows ids"
            )
        return events

    def as_of(self, user_id: str, at: datetime) -> list[Belief]:
        """The user's beliefs that were live at `at` (naive times are taken as UTC)."""
        at = as_utc(at) or at
        beliefs = self._select("WHERE user_id = ? ORDER BY created_at, id", [user_id])
        rows = self.conn.execute(
            SELECT_EVENTS + " WHERE event IN ('deleted', 'restored') AND belief_id IN "
            "(SELECT id FROM beliefs WHERE user_id = ?) ORDER BY seq",
            [user_id],
        ).fetchall()
        events: dict[str, list[HistoryEvent]] = {}
        for row in rows:
            belief_id, event = event_from_row(row)
            events.setdefault(belief_id, []).append(event)
        return beliefs_as_of(beliefs, at, events)

    def _returned(self, row: Belief, with_history: bool) -> Belief:
        """A copy of a held row for the caller (never the index's object), with its history."""
        return row.model_copy(
            update={
                "aliases": list(row.aliases),
                "rejected_alternatives": list(row.rejected_alternatives),
                "scope": list(row.scope),
                "participants": list(row.participants),
                "provenance": copy.deepcopy(row.provenance),
                "change_log": self.history(row.id) if with_history else [],
            }
        )
