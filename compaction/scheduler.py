"""The background schedule: a compaction run every `interval` seconds, failures recorded."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from compaction.errors import CompactionBusy
from compaction.runner import Compactor
from compaction.runs import RunReport

log = logging.getLogger("tenure.compaction")


class CompactionScheduler:
    """Started and stopped by the app lifespan; an interval of 0 turns it off."""

    def __init__(self, compactor: Compactor, interval: float) -> None:
        self._compactor = compactor
        self._interval = interval
        self._task: asyncio.Task[None] | None = None
        self.last: RunReport | None = None
        self.last_error: str | None = None

    def start(self) -> None:
        if self._interval > 0 and self._task is None:
            self._task = asyncio.create_task(self._loop(), name="tenure-compaction")

    async def stop(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self.tick()

    async def tick(self) -> RunReport | None:
        """One scheduled run; a run already in progress means this tick is skipped."""
        try:
            self.last = await self._compactor.run(trigger="scheduled")
            self.last_error = None
        except CompactionBusy:
            return None
        except Exception as exc:  # never let the schedule (or the server) die
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.exception("scheduled compaction failed")
            return None
        return self.last

    def state(self) -> dict[str, object]:
        return {
            "interval_s": self._interval,
            "running": self._compactor.running,
            "last_run": self.last.id if self.last else None,
            "last_error": self.last_error,
        }
