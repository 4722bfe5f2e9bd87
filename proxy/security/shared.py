"""Access shared by replicas on PostgreSQL: one session secret in the database, and every
replica's logouts and wrong keys, read back by the others a few times a second (with the
access tokens), so a login, a logout, the wrong-key limit and a revoked token hold whichever
replica a request reaches."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections import deque
from datetime import datetime, timedelta

from beliefs.model.models import as_utc
from beliefs.store.belief_store import BeliefStore
from beliefs.store.connection import store_refused
from beliefs.store.thread import StoreThread
from proxy.security.access import FailedAttempts, Sessions
from proxy.security.tokens import TokenBook, list_tokens

log = logging.getLogger("tenure.proxy")

POLL_S = 0.2
LATE_S = 10  # how long a row that committed late is still looked for
UNSENT_MAX = 10_000  # events of each kind kept while the store is away; past it the oldest go


class SharedAccess:
    """Ties this process's `Sessions` and `FailedAttempts` to the shared tables."""

    def __init__(
        self,
        thread: StoreThread,
        store: BeliefStore,
        sessions: Sessions,
        failures: FailedAttempts,
        tokens: TokenBook,
    ) -> None:
        self.thread = thread
        self.store = store
        self.sessions = sessions
        self.failures = failures
        self.tokens = tokens
        self.origin = secrets.token_hex(6)
        self._seq = 0
        self._seen: dict[int, datetime] = {}  # recent rows already applied, by sequence
        self._task: asyncio.Task[None] | None = None
        # Events not in the table yet (deques: appended on the loop, sent on the store thread).
        self._revoked: deque[str] = deque(maxlen=UNSENT_MAX)
        self._failed: deque[str] = deque(maxlen=UNSENT_MAX)

    async def start(self) -> None:
        secret, self._seq = await self.thread.run(self._open)
        self.sessions.share(secret)
        self.sessions.on_revoke = lambda nonce: self._record("revoked", nonce)
        self.failures.on_failed = lambda client: self._record("failed", client)
        self._task = asyncio.create_task(self._follow())

    async def reload_tokens(self) -> None:
        self.tokens.replace(await self.thread.run(list_tokens, self.store))

    async def stop(self) -> None:
        self.sessions.on_revoke = None
        self.failures.on_failed = None
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _open(self) -> tuple[str, int]:
        """The shared secret (made by the first replica to start), after reading every event
        recorded so far (the revocations; the wrong keys still within their window)."""
        self.store.execute(
            "INSERT INTO access_secret (id, secret) VALUES (1, ?) ON CONFLICT (id) DO NOTHING",
            [secrets.token_hex(32)],
        )
        # Wrong keys older than an hour count for no window: dropped as a replica starts.
        self.store.execute(
            "DELETE FROM access_events WHERE kind = 'failed' "
            "AND \"at\" < current_timestamp - INTERVAL '1 hour'"
        )
        row = self.store.execute("SELECT secret FROM access_secret WHERE id = 1").fetchone()
        assert row is not None
        self._apply(0)
        return str(row[0]), self._seq

    def _record(self, kind: str, value: str) -> None:
        (self._revoked if kind == "revoked" else self._failed).append(value)
        self.thread.submit(self._send)

    def _send(self) -> None:
        """Store thread: write the events not written yet. While PostgreSQL is away they wait
        here and every poll tries again, so a logout during an outage still ends the session
        on the other replicas once it is back."""
        for kind, waiting in (("revoked", self._revoked), ("failed", self._failed)):
            while waiting:
                try:
                    # The database's clock stamps the row: the replicas' clocks need not agree.
                    self.store.execute(
                        "INSERT INTO access_events (origin, kind, value) VALUES (?, ?, ?)",
                        [self.origin, kind, waiting[0]],
                    )
                except Exception as exc:
                    if store_refused(exc):
                        return
                    log.exception("recording a %s access event failed", kind)
                waiting.popleft()

    def _apply(self, after: int) -> None:
        # A row whose transaction commits after a later one's shows up behind the highest
        # sequence read: the recent rows are read again, so a late logout is not missed.
        rows = self.store.execute(
            'SELECT seq, origin, kind, value, "at", current_timestamp FROM access_events '
            f"WHERE seq > ? OR \"at\" >= current_timestamp - INTERVAL '{LATE_S} seconds' "
            "ORDER BY seq",
            [after],
        ).fetchall()
        for seq, origin, kind, value, at, now in rows:
            seq = int(seq)
            self._seq = max(self._seq, seq)
            if seq in self._seen or origin == self.origin:
                continue
            self._seen[seq] = as_utc(at)
            if kind == "revoked":
                self.sessions.revoked_elsewhere(str(value))
            else:
                ago = (as_utc(now) - as_utc(at)).total_seconds()
                if ago < self.failures.window_s:
                    self.failures.failed_elsewhere(str(value), ago)
        if rows:
            cutoff = as_utc(rows[-1][5]) - timedelta(seconds=LATE_S * 2)
            self._seen = {s: at for s, at in self._seen.items() if at >= cutoff}

    def _catch_up(self) -> None:
        self._send()
        self._apply(self._seq)
        # Tokens are few: read whole, a token made or revoked on any replica (or by `tenure
        # tokens` on the database) holds here within one poll.
        self.tokens.replace(list_tokens(self.store))

    async def _follow(self) -> None:
        away = False
        while True:
            await asyncio.sleep(POLL_S)
            try:
                await self.thread.run(self._catch_up)
            except Exception as exc:
                if not store_refused(exc):
                    log.exception("reading the other replicas' logouts and wrong keys failed")
                elif not away:  # PostgreSQL is away: said once, read again when it is back
                    log.warning("cannot read the other replicas' logouts (%s); retrying", exc)
                away = True
            else:
                away = False
