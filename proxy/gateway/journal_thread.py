"""The journal thread: the durable jobs of ending replies appended to the job journal, off the
event loop and apart from the store's writes.

The loop hands a job over with its row already built (`put`: a queue put, no task, no
executor call); the one thread appends whatever has gathered since its last append in one
write and one sync (group commit), then tells the loop once for the whole batch
(`call_soon_threadsafe`). Nothing else runs on this thread, and all it shares with the store
thread is the journal's lock (held there only while folded jobs are forgotten), so a reply's
end waits for one append, never behind the store's writes.

What the wait still costs under load is the loop: the thread's word and then the reply's task
each wait their turn behind the other requests' ready work. A search lets them go first
(`StoreWriter.ends_first`, which reads `telling`); the sockets' reads still come before them
(see docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable

from extractor.journal import JobJournal
from proxy.gateway.write_batches import Item

# On the loop, once per append: the batch, its segment (-1 when refused) and the error, if any.
Appended = Callable[[list[Item], int, Exception | None], None]


class JournalThread:
    """Start with `start()` on the loop that `appended` runs on; `stop()` once `idle()`."""

    def __init__(self, journal: JobJournal, appended: Appended) -> None:
        self._journal = journal
        self._appended = appended
        self._queue: queue.SimpleQueue[Item | None] = queue.SimpleQueue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._run, name="tenure-journal", daemon=True)
        self._waiting = 0  # handed over, the loop not yet told of their append
        self._settled = asyncio.Event()
        # Appends the loop is to be told of: each side counts its own (one writer each), so
        # the loop reads without a lock whether a word of this thread is on its way.
        self._sent = 0  # this thread's
        self._told = 0  # the loop's

    @property
    def waiting(self) -> int:
        return self._waiting

    @property
    def telling(self) -> bool:
        """Whether an append is over and the loop not yet told (its word is in the loop's
        queue, or about to be)."""
        return self._sent != self._told

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._settled.set()
        self._thread.start()

    def put(self, item: Item) -> None:
        """Hand over a job whose `pending` row is built (loop thread)."""
        assert item.pending is not None
        self._waiting += 1
        self._settled.clear()
        self._queue.put(item)

    async def idle(self) -> None:
        """Until every job handed over so far has been appended and the loop told."""
        await self._settled.wait()

    def stop(self) -> None:
        """End the thread once it has appended what it holds (call after `idle()`)."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()

    def _run(self) -> None:
        assert self._loop is not None
        while True:
            batch = [self._queue.get()]
            with contextlib.suppress(queue.Empty):
                while True:
                    batch.append(self._queue.get_nowait())
            items = [item for item in batch if item is not None]
            if items:
                rows = [item.pending for item in items if item.pending is not None]
                segment, error = -1, None
                try:
                    segment = self._journal.append(rows)
                except Exception as exc:  # a refusing disk, or anything: the store takes them
                    error = exc
                self._sent += 1
                try:
                    self._loop.call_soon_threadsafe(self._tell, items, segment, error)
                except RuntimeError:  # the loop is closed: nobody waits for them any more
                    return
            if len(items) < len(batch):
                return

    def _tell(self, items: list[Item], segment: int, error: Exception | None) -> None:
        """On the loop: the batch's append is over."""
        self._told += 1
        self._waiting -= len(items)
        if not self._waiting:
            self._settled.set()
        self._appended(items, segment, error)
