"""Opening a belief store: the connection, the index the store keeps current, and the store
that joins them. The one place both are built; above every layer of the package."""

from __future__ import annotations

from pathlib import Path

from beliefs.index.belief_index import BeliefIndex
from beliefs.store.belief_store import BeliefStore
from beliefs.store.connection import connect


def open_store(
    location: Path | str,
    *,
    read_only: bool = False,
    background: bool = False,
    replica: str | None = None,
    bound: int = 0,
    index: BeliefIndex | None = None,
) -> BeliefStore:
    """Open (creating and migrating unless read-only) the database file at `location`, or the
    PostgreSQL database a `postgresql://` URL names, with `index` (a new one by default) as
    the index the store fills and keeps current.

    With `background` the index is left empty and not ready: the caller starts
    `load_in_background` when it is ready to share the processor with the load.
    With a `bound` (DuckDB only) the index holds about that many beliefs, whole users,
    the most recently active first, and reads others when they are asked for.

    Raises:
        StoreLocked: another process holds the file.
        BeliefError: the file is missing (read-only) or not a usable database.
    """
    conn, path = connect(location, read_only=read_only)
    try:
        store = BeliefStore(
            conn, path, read_only=read_only, index=BeliefIndex() if index is None else index
        )
        store.start(background=background, replica=replica, bound=bound)
    except BaseException:
        conn.close()
        raise
    return store
