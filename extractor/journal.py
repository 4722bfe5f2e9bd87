"""The job journal: extraction jobs appended to a local file and synced to disk before the
`jobs` table has them.

A reply's end waits until its turn is safe. A DuckDB commit of its own costs several
milliseconds of CPU per turn; an append and `fdatasync` cost a tenth of that, and the table
then takes the journaled jobs in batches (one commit for many turns). A segment whose jobs are
all in the table is deleted, or emptied when it is the one being written. A process that dies
leaves its segments behind; the next one to start (`recover`) writes their jobs into the table
(skipping any already there) and deletes them.

Each process writes its own segments (`jobs-<pid>-<token>-<n>.log` in the journal directory)
and holds an exclusive `flock` on each while it lives. So replicas that share a home never
write to or replay each other's: a segment nobody holds belongs to a process that is gone.

Appends that arrive together share one write and one sync (group commit): the first caller
leads a flush of everything waiting, and callers who arrive while it runs wait for the next
flush, led by one of them. A caller returns only once a flush covering its bytes has synced, and
a flush the disk refuses is cut off the file again and raises in each of its callers.

A line is one job, a JSON array `[id, user_id, request_id, created_at, turn]` (the turn already
redacted). A line torn by a crash mid-write (no newline, or not JSON) is skipped on replay.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import secrets
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from extractor.jobs import PendingJob

if sys.platform == "win32":  # no flock: the gateway commits each job to the store instead
    SUPPORTED = False
else:
    import fcntl

    SUPPORTED = True

log = logging.getLogger("tenure.extractor")
# macOS has no fdatasync; its fsync flushes as far as the store's own commits do.
_sync = getattr(os, "fdatasync", os.fsync)

SEGMENT_BYTES = 8 << 20  # a segment this large is closed and a new one begun


@dataclass(slots=True)
class _Segment:
    number: int
    path: Path
    fd: int
    size: int = 0
    unfolded: int = 0  # jobs written here that the table does not have yet


@dataclass(slots=True)
class _Append:
    """One caller's jobs, waiting for the flush that writes and syncs them."""

    data: bytes
    jobs: int
    segment: int = -1
    error: OSError | None = None
    done: bool = False


def encode(job: PendingJob) -> bytes:
    line = [job.id, job.user_id, job.request_id, job.created_at.isoformat(), job.turn]
    return json.dumps(line, ensure_ascii=False).encode() + b"\n"


def decode(line: bytes) -> PendingJob | None:
    """The job on one line, or None for a torn or foreign line."""
    try:
        job_id, user_id, request_id, created_at, turn = json.loads(line)
        return PendingJob(
            str(job_id), str(user_id), str(request_id), str(turn),
            datetime.fromisoformat(created_at),
        )  # fmt: skip
    except (ValueError, TypeError):
        return None


def journal_of(home: Path, *, enabled: bool = True) -> JobJournal | None:
    """The journal of a home (its `journal` directory), or None when it is turned off or the
    platform has no `flock`: the server and the CLI's replay must agree on where it is."""
    return JobJournal(home / "journal") if enabled and SUPPORTED else None


class JobJournal:
    """Appends jobs durably (`append`), forgets them once the table has them (`folded`) and
    replays what a dead process left (`recover`). Thread-safe: appends run on the writer's
    journal thread, `folded` on the store thread."""

    def __init__(
        self,
        directory: Path,
        *,
        segment_bytes: int = SEGMENT_BYTES,
        sync: Callable[[int], None] = _sync,
    ) -> None:
        self.directory = directory
        self._segment_bytes = segment_bytes
        self._sync = sync
        self._prefix = f"jobs-{os.getpid()}-{secrets.token_hex(4)}"
        self._numbers = itertools.count()
        self._lock = threading.Lock()
        self._flushed = threading.Condition(self._lock)
        self._waiting: list[_Append] = []  # appends for the next flush
        self._flushing = False
        self._segments: dict[int, _Segment] = {}
        self._current: _Segment | None = None

    @property
    def unfolded(self) -> int:
        with self._lock:
            return sum(segment.unfolded for segment in self._segments.values())

    def append(self, jobs: Sequence[PendingJob]) -> int:
        """Write the jobs and sync them to disk, with those of any appends waiting meanwhile;
        returns the number of the segment they are in, for `folded`. Raises OSError when the
        disk refuses (nothing of them is kept)."""
        entry = _Append(b"".join(encode(job) for job in jobs), len(jobs))
        with self._flushed:
            self._waiting.append(entry)
            while not entry.done:
                if self._flushing:
                    self._flushed.wait()
                else:
                    self._flush()
        if entry.error is not None:
            raise entry.error
        return entry.segment

    def _flush(self) -> None:
        """With the lock held: write every waiting append and sync them once. The lock is let
        go during the write and the sync, so that the next appends gather for the next flush."""
        batch, self._waiting = self._waiting, []
        segment = self._current
        try:
            if segment is None or segment.size >= self._segment_bytes:
                segment = self._current = self._open_segment()
        except OSError as exc:
            _settle(batch, -1, exc)
            self._flushed.notify_all()
            return
        data = b"".join(entry.data for entry in batch)
        jobs = sum(entry.jobs for entry in batch)
        start = segment.size
        segment.unfolded += jobs  # so `folded` does not empty the segment under the write
        self._flushing = True
        error: OSError | None = OSError("the journal's flush did not finish")
        self._lock.release()
        try:
            error = self._write(segment.fd, data, start)
        finally:
            self._lock.acquire()
            self._flushing = False
            if error is None:
                segment.size += len(data)
            else:
                segment.unfolded -= jobs
            _settle(batch, segment.number, error)
            self._flushed.notify_all()

    def _write(self, fd: int, data: bytes, start: int) -> OSError | None:
        """Append and sync; on failure cut the file back to `start` (no torn line before the
        next flush) and return the error."""
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            self._sync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            return exc
        return None

    def folded(self, numbers: Iterable[int]) -> None:
        """The table has committed these jobs (one segment number each). A segment left with
        none unfolded is deleted, or emptied if it is the one being written."""
        with self._lock:
            touched = set()
            for number in numbers:
                segment = self._segments.get(number)
                if segment is not None:
                    segment.unfolded -= 1
                    touched.add(number)
            for number in touched:
                segment = self._segments[number]
                if segment.unfolded > 0:
                    continue
                if segment is self._current:
                    if segment.size:
                        with contextlib.suppress(OSError):  # a replay skips jobs already in
                            os.ftruncate(segment.fd, 0)
                            segment.size = 0
                else:
                    self._drop(segment)

    def recover(self, insert: Callable[[list[PendingJob]], object]) -> int:
        """Replay the segments of processes that are gone: `insert(jobs)` must write them (and
        skip the ids the table already has) and commit, then the segment is deleted. A segment
        another live process holds is left alone. Returns how many jobs were read."""
        self.directory.mkdir(parents=True, exist_ok=True)
        own = {segment.path for segment in self._segments.values()}
        read = 0
        for path in sorted(self.directory.glob("jobs-*")):
            if path in own or path.suffix not in (".log", ".new"):
                continue
            try:
                fd = os.open(path, os.O_RDWR)
            except FileNotFoundError:  # another process replayed it meanwhile
                continue
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # its process is alive
                jobs, torn = _read(fd)
                if jobs:
                    insert(jobs)
                read += len(jobs)
                if torn:
                    log.warning("%s: %d torn line(s) skipped (a crash mid-write)", path, torn)
                if jobs:
                    log.info("%s: %d journaled job(s) written to the store", path.name, len(jobs))
                path.unlink(missing_ok=True)
            finally:
                os.close(fd)
        return read

    def reread(self, wanted: dict[int, set[str]]) -> list[tuple[int, PendingJob]]:
        """The jobs with these ids in this process's own segments (by number), read back
        from disk, each with its segment's number for `folded`."""
        with self._lock:
            paths = {n: self._segments[n].path for n in wanted if n in self._segments}
        found: list[tuple[int, PendingJob]] = []
        for number, path in paths.items():
            fd = os.open(path, os.O_RDONLY)
            try:
                jobs, _torn = _read(fd)
            finally:
                os.close(fd)
            found.extend((number, job) for job in jobs if job.id in wanted[number])
        return found

    def close(self) -> None:
        """Close the segments: emptied ones are deleted, the rest (jobs the table has not
        taken) stay for the next start to replay."""
        with self._flushed:
            while self._flushing or self._waiting:
                self._flushed.wait()
            for segment in list(self._segments.values()):
                if segment.unfolded <= 0:
                    self._drop(segment)
                else:
                    os.close(segment.fd)
                    del self._segments[segment.number]
            self._current = None

    def _open_segment(self) -> _Segment:
        """A new segment, locked before it has its final name so that no other process's
        `recover` can take it (a `.new` name is replayed only when nobody holds it)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        number = next(self._numbers)
        path = self.directory / f"{self._prefix}-{number}.log"
        staging = path.with_suffix(".new")
        fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.rename(staging, path)
            _sync_directory(self.directory)  # the segment's name survives a crash too
        except OSError:
            os.close(fd)
            staging.unlink(missing_ok=True)
            raise
        segment = _Segment(number, path, fd)
        self._segments[number] = segment
        if self._current is not None and self._current.unfolded <= 0:
            self._drop(self._current)
        return segment

    def _drop(self, segment: _Segment) -> None:
        with contextlib.suppress(OSError):
            segment.path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            os.close(segment.fd)
        self._segments.pop(segment.number, None)


def _settle(batch: list[_Append], segment: int, error: OSError | None) -> None:
    for entry in batch:
        entry.segment, entry.error, entry.done = segment, error, True


def _read(fd: int) -> tuple[list[PendingJob], int]:
    """The jobs in a segment and how many lines were torn."""
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    jobs, torn = [], 0
    for line in b"".join(chunks).splitlines():
        if not line.strip():
            continue
        job = decode(line)
        if job is None:
            torn += 1
        else:
            jobs.append(job)
    return jobs, torn


def _sync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
