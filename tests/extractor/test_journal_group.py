"""Group commit in the job journal: appends that arrive while a flush runs share the next one's
write and sync, each returns only once its bytes are synced, and what a caller was told is on
disk is what a later start replays."""

from __future__ import annotations

import errno
import os
import threading
from datetime import UTC, datetime
from pathlib import Path

from extractor.jobs import PendingJob, pending_job
from extractor.journal import JobJournal, decode
from extractor.turn import Turn

FOLLOWERS = 15
_sync = getattr(os, "fdatasync", os.fsync)


def tagged_turn(tag: str) -> Turn:
    """One finished turn, told apart by `tag`."""
    return Turn(
        request_id=tag,
        user_id="ana",
        model="gpt-4o-mini",
        user_message=f"{tag}: we deploy on fridays",
        assistant_message="noted",
        created_at=datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC),
    )


def _job(tag: str) -> PendingJob:
    return pending_job(tagged_turn(tag))


class GatedSync:
    """The real sync, counted; the first call holds until `release` (so that appends gather
    behind it) and the calls numbered in `refuse` fail as a full disk would."""

    def __init__(self, refuse: frozenset[int] = frozenset()) -> None:
        self.calls = 0
        self.refuse = refuse
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, fd: int) -> None:
        self.calls += 1
        if self.calls == 1:
            self.entered.set()
            assert self.release.wait(30)
        if self.calls in self.refuse:
            raise OSError(errno.ENOSPC, "No space left on device")
        _sync(fd)


def _append_together(journal: JobJournal, sync: GatedSync, tags: list[str]) -> dict[str, object]:
    """The first tag's append leads a flush held in its sync; the others arrive meanwhile.
    Returns each tag's outcome: its segment number, or the OSError it raised."""
    outcomes: dict[str, object] = {}
    arrived = threading.Semaphore(0)

    def append(tag: str, *, lead: bool = False) -> None:
        if not lead:
            arrived.release()
        try:
            outcomes[tag] = journal.append([_job(tag)])
        except OSError as exc:
            outcomes[tag] = exc

    leader = threading.Thread(target=append, args=(tags[0],), kwargs={"lead": True})
    leader.start()
    assert sync.entered.wait(30)
    followers = [threading.Thread(target=append, args=(tag,)) for tag in tags[1:]]
    for thread in followers:
        thread.start()
    for _ in followers:
        assert arrived.acquire(timeout=30)
    sync.release.set()
    for thread in [leader, *followers]:
        thread.join(30)
    return outcomes


def _on_disk(directory: Path) -> list[str]:
    lines = b"".join(path.read_bytes() for path in sorted(directory.glob("jobs-*")))
    return [job.request_id for job in map(decode, lines.splitlines()) if job is not None]


def _recovered(directory: Path) -> list[str]:
    jobs: list[PendingJob] = []
    later = JobJournal(directory)
    later.recover(jobs.extend)
    later.close()
    return [job.request_id for job in jobs]


def test_appends_that_arrive_together_share_a_sync(tmp_path: Path) -> None:
    sync = GatedSync()
    journal = JobJournal(tmp_path / "journal", sync=sync)
    tags = [f"turn-{n}" for n in range(1 + FOLLOWERS)]
    outcomes = _append_together(journal, sync, tags)

    assert sorted(outcomes) == sorted(tags)
    assert len(set(outcomes.values())) == 1  # all in the one segment, none refused
    assert sync.calls < len(tags)  # one sync each would be len(tags)
    assert sorted(_on_disk(tmp_path / "journal")) == sorted(tags)
    assert journal.unfolded == len(tags)
    journal.close()


def test_every_acknowledged_append_is_replayed_and_a_refused_flush_left_no_trace(
    tmp_path: Path,
) -> None:
    sync = GatedSync(refuse=frozenset({2}))  # the flush after the leader's fails
    journal = JobJournal(tmp_path / "journal", sync=sync)
    outcomes = _append_together(journal, sync, [f"turn-{n}" for n in range(1 + FOLLOWERS)])
    refused = sorted(tag for tag, outcome in outcomes.items() if isinstance(outcome, OSError))
    acknowledged = sorted(tag for tag, outcome in outcomes.items() if isinstance(outcome, int))
    assert refused and "turn-0" in acknowledged
    # The refused flush was cut off the file: no torn or refused line stays.
    assert sorted(_on_disk(tmp_path / "journal")) == acknowledged

    def after(n: int) -> None:
        outcomes[f"after-{n}"] = journal.append([_job(f"after-{n}")])

    threads = [threading.Thread(target=after, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    acknowledged += [f"after-{n}" for n in range(8)]
    assert journal.unfolded == len(acknowledged)
    journal.close()  # unfolded jobs stay for the next start

    assert sorted(_recovered(tmp_path / "journal")) == sorted(acknowledged)
    assert list((tmp_path / "journal").glob("jobs-*")) == []
