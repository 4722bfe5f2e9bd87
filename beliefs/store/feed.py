"""The change feed that keeps replicas on one PostgreSQL database on one memory.

Every committed transaction that changes beliefs, personas or rules adds one row per changed
key to `belief_changes` (sequence-numbered, naming the replica it came from) and sends
`NOTIFY tenure_changes`, both inside the transaction, so they exist exactly when the change
does. Every replica listens on its own connection and, on a notice (or at least once a second,
which also covers a lost connection), reads the rows after the last one it applied and
refreshes those keys in its in-memory index from the rows themselves. Refreshing is idempotent,
so a row read twice is harmless: the reader re-reads the recent range where a sequence number
was skipped (a transaction that drew it had not committed yet) until it shows up or ages out.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from beliefs.store.connection import Connection
from beliefs.store.migrations import Migration

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger("tenure.feed")

CHANNEL = "tenure_changes"
# How long a skipped sequence number is waited for before it is taken as rolled back.
GAP_WAIT_S = 10.0
POLL_S = 1.0

# one row per committed change of a belief, persona or rules, for replicas (PostgreSQL only)
CHANGE_FEED = Migration(
    "beliefs",
    "change_feed",
    (
        "CREATE SEQUENCE belief_changes_seq START 1",
        """
        CREATE TABLE belief_changes (
            seq BIGINT PRIMARY KEY DEFAULT nextval('belief_changes_seq'),
            origin VARCHAR NOT NULL,
            kind VARCHAR NOT NULL CHECK (kind IN ('belief', 'persona', 'rules')),
            key VARCHAR NOT NULL,
            "at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
        )
        """,
    ),
)
FEED_TABLES = frozenset({"belief_changes"})


class FeedDatabase(Protocol):
    """The database a replica's feed reads and writes (the store, which holds the feed)."""

    @property
    def conn(self) -> Connection: ...


class FeedFollower(FeedDatabase, Protocol):
    """What catching up refreshes: the store's in-memory copies of changed keys."""

    def refresh_beliefs(self, ids: Sequence[str]) -> None: ...
    def refresh_personas(self, user_ids: Sequence[str]) -> None: ...
    def reload_rules(self) -> None: ...


def new_replica_id() -> str:
    return f"{socket.gethostname()}-{secrets.token_hex(3)}"


class ChangeFeed:
    """One replica's position in the feed; its calls run on the store's thread."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.applied_seq = 0
        self.applied_at = time.monotonic()
        self.head_seq = 0
        self._gaps: dict[int, float] = {}  # skipped seq -> when first seen missing

    # -- writing -------------------------------------------------------------------------------

    def record(self, db: FeedDatabase, changes: Iterable[tuple[str, str]]) -> None:
        """Inside the committing transaction: the changed keys, and a notice for the others."""
        rows = sorted(set(changes))
        if not rows:
            return
        db.conn.execute(
            "INSERT INTO belief_changes (origin, kind, key) "
            "SELECT ?, k, v FROM unnest(?::VARCHAR[], ?::VARCHAR[]) AS t(k, v)",
            [self.origin, [k for k, _ in rows], [v for _, v in rows]],
        )
        db.conn.execute(f"NOTIFY {CHANNEL}")

    # -- following -----------------------------------------------------------------------------

    def start_at_head(self, db: FeedDatabase) -> None:
        """On open: the rows just loaded already hold every change so far."""
        row = db.conn.execute("SELECT coalesce(max(seq), 0) FROM belief_changes").fetchone()
        self.applied_seq = self.head_seq = int(row[0]) if row else 0

    def catch_up(self, db: FeedFollower) -> int:
        """Apply the other replicas' changes since the last applied one; returns how many."""
        low = min(self._gaps, default=self.applied_seq + 1) - 1
        rows = db.conn.execute(
            "SELECT seq, origin, kind, key FROM belief_changes WHERE seq > ? ORDER BY seq", [low]
        ).fetchall()
        now = time.monotonic()
        beliefs: set[str] = set()
        personas: set[str] = set()
        rules = False
        for seq, origin, kind, key in rows:
            self._gaps.pop(seq, None)
            if seq > self.applied_seq:
                for missing in range(self.applied_seq + 1, seq):
                    self._gaps.setdefault(missing, now)
                self.applied_seq = seq
            if origin == self.origin:
                continue
            if kind == "belief":
                beliefs.add(key)
            elif kind == "persona":
                personas.add(key)
            else:
                rules = True
        self._gaps = {s: t for s, t in self._gaps.items() if now - t < GAP_WAIT_S}
        if beliefs:
            db.refresh_beliefs(sorted(beliefs))
        if personas:
            db.refresh_personas(sorted(personas))
        if rules:
            db.reload_rules()
        self.head_seq = max(self.head_seq, self.applied_seq)
        self.applied_at = now
        return len(beliefs) + len(personas) + int(rules)

    def status(self, db: FeedDatabase) -> dict[str, Any]:
        row = db.conn.execute("SELECT coalesce(max(seq), 0) FROM belief_changes").fetchone()
        self.head_seq = int(row[0]) if row else self.head_seq
        return {
            "applied_seq": self.applied_seq,
            "head_seq": self.head_seq,
            "lag_changes": max(0, self.head_seq - self.applied_seq),
            "last_catch_up_s": round(time.monotonic() - self.applied_at, 3),
        }


class Listener:
    """A thread on its own connection: calls `wake()` on every notice and at least every
    `POLL_S`; reconnects (with backoff) when the connection drops, then wakes at once, so the
    store catches up from its last applied sequence."""

    def __init__(self, url: str, wake: Callable[[], None]) -> None:
        self.url = url
        self.wake = wake
        self.connected = False
        self._stop = threading.Event()
        self._conn: psycopg.Connection[Any] | None = None
        self._thread = threading.Thread(target=self._run, name="tenure-feed", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        import psycopg  # PostgreSQL's driver: loaded with the first PostgreSQL store

        backoff = 0.2
        lost = False  # said once per outage, not at every attempt
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True) as conn:
                    self._conn = conn
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.connected, backoff = True, 0.2
                    if lost:
                        log.warning("change feed reconnected; catching up on what was missed")
                        lost = False
                    self.wake()  # catch up on what was missed while disconnected
                    while not self._stop.is_set():
                        woke = False
                        for _ in conn.notifies(timeout=POLL_S, stop_after=1):
                            woke = True
                        if not woke:
                            with contextlib.suppress(Exception):
                                conn.execute("SELECT 1")  # notices a dead connection
                        self.wake()
            except psycopg.Error as exc:
                if self._stop.is_set():
                    break
                if not lost:
                    log.warning("change feed connection lost (%s); reconnecting", exc)
                lost = True
            finally:
                self.connected = False
                self._conn = None
            self._stop.wait(backoff)
            backoff = min(backoff * 2, 5.0)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(POLL_S * 3)
