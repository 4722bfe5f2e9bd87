"""Following the other replicas' writes: the change feed's listener wakes the store thread,
which applies what they committed to this process's memory (PostgreSQL stores only)."""

from __future__ import annotations

import logging
import threading

from beliefs.store.belief_store import BeliefStore
from beliefs.store.connection import store_refused
from beliefs.store.feed import Listener
from beliefs.store.thread import StoreThread

log = logging.getLogger("tenure.proxy")


class Follower:
    """One catch-up queued on the store thread at a time, however many notices arrive."""

    def __init__(self, url: str, thread: StoreThread, store: BeliefStore) -> None:
        self.store = store
        self.thread = thread
        self._lock = threading.Lock()
        self._queued = False
        self._stopped = False
        self._away = False
        self.listener = Listener(url, self._wake)

    def start(self) -> None:
        self.listener.start()

    def _wake(self) -> None:
        with self._lock:
            if self._queued or self._stopped:
                return
            self._queued = True
        self.thread.submit(self._apply)

    def _apply(self) -> None:
        with self._lock:
            self._queued = False
        try:
            self.store.catch_up()
        except Exception as exc:
            if not store_refused(exc):
                log.exception("applying other replicas' changes failed; retried on the next notice")
            elif not self._away:  # the store is away: said once, caught up when it is back
                log.warning("cannot read other replicas' changes (%s); retried on reconnect", exc)
            self._away = True
        else:
            self._away = False

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
        self.listener.stop()
