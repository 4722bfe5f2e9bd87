"""The leases of claimed jobs, kept from claim to written result: replicas sharing jobs
(PostgreSQL) take over a job whose lease ran out, so its holder renews it while it works."""

from __future__ import annotations

import logging
import threading

from beliefs.store.thread import StoreThread
from extractor.jobs import JobQueue

log = logging.getLogger("tenure.extractor")


class LeaseKeeper:
    """Renews every job the queue holds each third of a lease, from a thread of its own, so a
    busy event loop (a long parse, an import on first call) does not let a lease run out."""

    def __init__(self, thread: StoreThread, queue: JobQueue) -> None:
        self.thread = thread
        self.queue = queue
        self._stopped: threading.Event | None = None

    @property
    def running(self) -> bool:
        return self._stopped is not None

    def start(self) -> None:
        """Start renewing (a no-op for a store one process owns: it has no leases)."""
        if self.queue.lease_s <= 0 or self._stopped is not None:
            return
        stopped = self._stopped = threading.Event()
        threading.Thread(
            target=self._run, args=(stopped,), name="tenure-leases", daemon=True
        ).start()

    def stop(self) -> None:
        """Stop renewing; a renewal under way finishes (it only touches jobs still held)."""
        stopped, self._stopped = self._stopped, None
        if stopped is not None:
            stopped.set()

    def _run(self, stopped: threading.Event) -> None:
        every = self.queue.lease_s / 3
        while not stopped.wait(every):
            try:  # on the store thread, in turn with the claims and writes
                self.thread.submit(self.queue.renew_held).result()
            except Exception as exc:  # the next renewal may succeed; the lease says how long
                if not stopped.is_set():
                    log.warning("could not renew the leases of running jobs: %s", exc)
