"""A claimed job's lease, kept while its call runs: replicas sharing jobs (PostgreSQL) take over
a job whose lease ran out, so a slow call renews it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from beliefs.store.thread import StoreThread
from extractor.jobs import JobQueue

log = logging.getLogger("tenure.extractor")


@contextlib.asynccontextmanager
async def lease_kept(thread: StoreThread, queue: JobQueue, job_id: str) -> AsyncIterator[None]:
    """Renew the job's lease every third of it while the body runs (shared stores only)."""
    lease = queue.lease_s
    if lease <= 0:
        yield
        return

    async def renew() -> None:
        while True:
            await asyncio.sleep(lease / 3)
            try:
                await thread.run(queue.renew, job_id)
            except Exception as exc:  # the next renewal may succeed; the lease says how long
                log.warning("job %s: could not renew its lease: %s", job_id, exc)

    task = asyncio.create_task(renew(), name=f"tenure-lease-{job_id}")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
