"""Importing a belief file into the store in batches, in one transaction.

Entries are checked (`invariants.ImportCheck`) and written a batch at a time, so an import of a
million beliefs holds one batch of them, not the file, and asks the database only about the
ids, names and chains the file touches; a refused file rolls the transaction back, and a process
killed before the commit leaves the store as it was.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from itertools import islice
from typing import TYPE_CHECKING

from beliefs.model.errors import ImportRejected
from beliefs.model.models import Belief
from beliefs.store.invariants import ImportCheck
from beliefs.store.rows import LIVE_SQL

if TYPE_CHECKING:
    from beliefs.store.database import BeliefDatabase

IMPORT_BATCH = 5_000  # entries checked and written at a time
_ANY = "(SELECT unnest(?::VARCHAR[]))"


def batches(items: Iterable[Belief], size: int = IMPORT_BATCH) -> Iterator[list[Belief]]:
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch


class StoredBeliefs:
    """The `invariants.StoredView` of a store, inside the import's transaction."""

    def __init__(self, store: BeliefDatabase) -> None:
        self.store = store

    def stored_ids(self, ids: Sequence[str]) -> set[str]:
        self.store.flush()
        rows = self.store.conn.execute(
            f"SELECT id FROM beliefs WHERE id IN {_ANY}", [list(ids)]
        ).fetchall()
        return {bid for (bid,) in rows}

    def live_named(self, names: Collection[tuple[str, str]]) -> list[Belief]:
        if not names:
            return []
        where = f"WHERE canonical_name IN {_ANY} AND {LIVE_SQL}"
        found = self.store._select(where, [sorted({name for _, name in names})])
        return [b for b in found if (b.user_id, b.canonical_name) in names]

    def chains_of(self, ids: Collection[str]) -> list[Belief]:
        """Rows on the chains of `ids`: links followed both ways, a wave of ids at a time."""
        held: dict[str, Belief] = {}
        asked: set[str] = set()
        wave = set(ids)
        while wave:
            asked |= wave
            ordered = sorted(wave)
            rows = [
                *self.store._select(f"WHERE id IN {_ANY}", [ordered]),
                *self.store._select(f"WHERE superseded_by IN {_ANY}", [ordered]),
            ]
            found: set[str] = set()
            for b in rows:
                held.setdefault(b.id, b)
                found.add(b.id)
                if b.superseded_by is not None:
                    found.add(b.superseded_by)
            wave = found - asked
        return list(held.values())


def import_into(store: BeliefDatabase, beliefs: Iterable[Belief], batch: int = IMPORT_BATCH) -> int:
    """Check and write `beliefs` a batch at a time in one transaction; all or nothing.

    Raises:
        ImportRejected: any entry would break an invariant (the message lists the entries), or
            `beliefs` raised it while being read.
    """
    with store.transaction():
        check = ImportCheck(StoredBeliefs(store))
        count = 0
        for entries in batches(beliefs, batch):
            check.add(entries, count)
            count += len(entries)
            if check.clean:
                store._insert_many(entries)
        issues = check.finish()
        if issues:
            shown = "; ".join(str(issue) for issue in issues[:10])
            more = f" (and {len(issues) - 10} more)" if len(issues) > 10 else ""
            raise ImportRejected(f"{shown}{more}; nothing was imported")
    return count
