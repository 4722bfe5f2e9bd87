"""Access shared by replicas on PostgreSQL: one session secret in the database, and every
replica's logouts and wrong keys, read back by the others a few times a second, so a login,
a logout and the wrong-key limit hold whichever replica a request reaches."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets

from beliefs.models import utcnow
from beliefs.rows import as_utc
from beliefs.store import BeliefStore
from beliefs.thread import StoreThread
from proxy.security.access import FailedAttempts, Sessions

log = logging.getLogger("tenure.proxy")

POLL_S = 0.2


class SharedAccess:
    """Ties this process's `Sessions` and `FailedAttempts` to the shared tables."""

    def __init__(
        self, thread: StoreThread, store: BeliefStore, sessions: Sessions, failures: FailedAttempts
    ) -> None:
        self.thread = thread
        self.store = store
        self.sessions = sessions
        self.failures = failures
        self.origin = secrets.token_hex(6)
        self._seq = 0
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        secret, self._seq = await self.thread.run(self._open)
        self.sessions.share(secret)
        self.sessions.on_revoke = lambda nonce: self._record("revoked", nonce)
        self.failures.on_failed = lambda client: self._record("failed", client)
        self._task = asyncio.create_task(self._follow())

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
        row = self.store.execute("SELECT secret FROM access_secret WHERE id = 1").fetchone()
        assert row is not None
        self._apply(0)
        return str(row[0]), self._seq

    def _record(self, kind: str, value: str) -> None:
        def insert() -> None:
            self.store.execute(
                'INSERT INTO access_events (origin, kind, value, "at") VALUES (?, ?, ?, ?)',
                [self.origin, kind, value, utcnow()],
            )

        self.thread.submit(insert)

    def _apply(self, after: int) -> None:
        rows = self.store.execute(
            'SELECT seq, origin, kind, value, "at" FROM access_events WHERE seq > ? ORDER BY seq',
            [after],
        ).fetchall()
        now = utcnow()
        for seq, origin, kind, value, at in rows:
            self._seq = max(self._seq, int(seq))
            if origin == self.origin:
                continue
            if kind == "revoked":
                self.sessions.revoked_elsewhere(str(value))
            else:
                ago = (now - as_utc(at)).total_seconds()
                if ago < self.failures.window_s:
                    self.failures.failed_elsewhere(str(value), ago)

    def _catch_up(self) -> None:
        self._apply(self._seq)

    async def _follow(self) -> None:
        while True:
            await asyncio.sleep(POLL_S)
            try:
                await self.thread.run(self._catch_up)
            except Exception:
                log.exception("reading the other replicas' logouts and wrong keys failed")
