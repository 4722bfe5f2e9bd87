"""Replicas on one PostgreSQL database: the change feed they follow, the locks they share and
the refreshing of what changed elsewhere (`beliefs.store.feed`)."""

from __future__ import annotations

from collections.abc import Sequence

from beliefs.context.contested import OPEN_SQL
from beliefs.store.connection import is_postgres
from beliefs.store.feed import CHANGE_FEED, ChangeFeed
from beliefs.store.personas import PersonaHolding
from beliefs.store.rule_store import RuleHolding


class Replication(PersonaHolding, RuleHolding):
    """A replica's place in the change feed, and the refreshes it applies (store thread)."""

    def follow(self, replica: str) -> None:
        """Join the change feed at its head, before the rows are loaded (see beliefs.store.feed)."""
        self.ensure_schema([CHANGE_FEED])
        self.feed = ChangeFeed(replica)
        self.feed.start_at_head(self)

    def try_lock(self, name: str) -> bool:
        """Hold `name` across replicas until `unlock` (True at once on DuckDB: one process)."""
        return self.conn.try_lock(name) if is_postgres(self.conn) else True

    def unlock(self, name: str) -> None:
        if is_postgres(self.conn):
            self.conn.unlock(name)

    def catch_up(self) -> int:
        """Apply other replicas' committed changes to the memory (store thread); 0 on DuckDB."""
        if self.feed is None or self._depth:
            return 0
        return self.feed.catch_up(self)

    def refresh_beliefs(self, ids: Sequence[str]) -> None:
        """Re-read the rows with these ids into the memory (another replica changed them)."""
        found = {
            b.id: b for b in self._select("WHERE id IN (SELECT unnest(?::VARCHAR[]))", [list(ids)])
        }
        for belief_id in ids:
            belief = found.get(belief_id)
            if belief is None:
                self.index.remove(belief_id)
                self._deleted_ids.discard(belief_id)
                continue
            self.index.upsert(belief)
            if belief.deleted_at is None:
                self._deleted_ids.discard(belief_id)
            else:
                self._deleted_ids.add(belief_id)
        self.reload_contested()

    def reload_contested(self) -> None:
        """Re-read the open contradictions (on open, and when other replicas changed beliefs:
        a conflict they opened or closed is announced as a change of its belief)."""
        self.contested.load(self.conn.execute(OPEN_SQL).fetchall())
