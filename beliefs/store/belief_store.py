"""The belief store: rows are history, supersession is a link, every change is an event.

`BeliefStore` is put together from one class per thing it holds (see `beliefs.store.database`);
`beliefs.opening.open_store` connects one and hands it the index it keeps current.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from typing import Any

from beliefs.model.errors import BeliefError
from beliefs.model.models import Belief, normalize_canonical_name
from beliefs.store import migrations
from beliefs.store.connection import is_postgres
from beliefs.store.feed import new_replica_id
from beliefs.store.importer import IMPORT_BATCH, import_into
from beliefs.store.index_loading import IndexLoading
from beliefs.store.invariants import verify_beliefs
from beliefs.store.replication import Replication
from beliefs.store.rows import LIVE_SQL
from beliefs.store.supersession import Supersession


class BeliefStore(Supersession, Replication, IndexLoading):
    """Belief operations; every change appends a history event in the same transaction."""

    def start(
        self, *, background: bool = False, replica: str | None = None, bound: int = 0
    ) -> None:
        """Bring a store just connected up: schema, the replica's feed or the index's bound,
        the cached personas, contradictions and rules, then the index (unless `background`:
        then the index is left empty and not ready until `load_in_background`).

        Raises:
            BeliefError: the schema needs an upgrade on a read-only file, or a bound is asked
                of a PostgreSQL store.
        """
        self.conn.execute("SET TimeZone = 'UTC'")
        self.ensure_schema(migrations.MIGRATIONS)
        postgres = is_postgres(self.conn)
        if postgres:
            if bound:
                raise BeliefError(
                    f"an index bound ({bound:,} beliefs) needs a DuckDB store: a "
                    "PostgreSQL replica holds every belief; unset TENURE_INDEX_MAX_BELIEFS"
                )
            self.follow(replica or new_replica_id())
        elif bound:
            self.bound_index(bound)
        self.load_personas()
        self.reload_contested()
        self.reload_rules()
        if background and not postgres:
            self.index.ready.clear()
        else:  # a PostgreSQL replica loads now, having joined the feed at its head (`follow`)
            self.load_index(self.conn)

    # -- reads ---------------------------------------------------------------------------------

    def get(self, belief_id: str, *, with_history: bool = True) -> Belief:
        """The belief with its change_log (soft-deleted rows included); without the log (and
        without a query) if not `with_history`.

        Raises:
            BeliefNotFound: no row with that id.
        """
        return self._returned(self._require(belief_id), with_history)

    def find_live(
        self, user_id: str, canonical_name: str, scope: Sequence[str] | None = None
    ) -> Belief | None:
        try:
            name = normalize_canonical_name(canonical_name)
        except ValueError:
            return None
        sql = f"WHERE user_id = ? AND canonical_name = ? AND {LIVE_SQL}"
        params: list[Any] = [user_id, name]
        if scope:
            sql += " AND list_has_any(scope, ?)"
            params.append([s.strip().lower() for s in scope])
        found = self._select(sql + " ORDER BY created_at, id LIMIT 1", params)
        return found[0] if found else None

    def list(
        self,
        *,
        user_id: str | None = None,
        scope: str | None = None,
        agent_id: str | None = None,
        type: str | None = None,
        status: str | None = None,
        pinned: bool | None = None,
        review_state: str | None = None,
        include_superseded: bool = False,
        include_deleted: bool = False,
        limit: int | None = None,
        offset: int = 0,
        with_history: bool = False,
    ) -> builtins.list[Belief]:
        """Beliefs matching every given filter, oldest first; change_log only if `with_history`."""
        clauses: builtins.list[str] = []
        params: builtins.list[Any] = []
        for column, value in (
            ("user_id", user_id),
            ("agent_id", agent_id),
            ("type", type),
            ("epistemic_status", status),
            ("pinned", pinned),
            ("review_state", review_state),
        ):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        if scope is not None:
            clauses.append("list_contains(scope, ?)")
            params.append(scope.strip().lower())
        if not include_superseded:
            clauses.append("superseded_by IS NULL AND epistemic_status <> 'superseded'")
        if not include_deleted:
            clauses.append("deleted_at IS NULL")
        sql = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        sql += " ORDER BY created_at, id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        if offset:
            sql += f" OFFSET {int(offset)}"
        beliefs = self._select(sql, params)
        if with_history and beliefs:
            logs = self._events([b.id for b in beliefs])
            beliefs = [b.model_copy(update={"change_log": logs.get(b.id, [])}) for b in beliefs]
        return beliefs

    def verify(self) -> builtins.list[str]:
        """Broken invariants across the whole store; empty means clean."""
        return verify_beliefs(self._select(""))

    def import_beliefs(self, beliefs: Iterable[Belief], *, batch: int = IMPORT_BATCH) -> int:
        """Add beliefs as they are (ids, timestamps, links, change_log); all or nothing, read
        and written a batch at a time (`beliefs.store.importer`).

        Raises:
            ImportRejected: any entry would break an invariant; the message lists the entries.
        """
        return import_into(self, beliefs, batch)
