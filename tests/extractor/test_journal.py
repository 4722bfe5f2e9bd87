"""The job journal: appended jobs are on disk, forgotten once the table has them, and replayed
from a dead process's segments exactly once; a live process's segments are never touched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from beliefs.opening import open_store
from extractor.jobs import JobQueue, PendingJob, pending_job
from extractor.journal import JobJournal, decode, encode
from extractor.turn import Turn

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-" + "Zq8Xw7Vu6Ts5Rq4Po3Nm" * 2


def _turn(n: int) -> Turn:
    return Turn(
        request_id=f"req-{n}",
        user_id="ana",
        model="gpt-4o-mini",
        user_message=f"turn {n}: we deploy with {KEY} on fridays 🚀",
        assistant_message=f"noted {n}",
        created_at=datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC),
    )


@pytest.fixture
def queue(store_location: Path | str) -> Iterator[JobQueue]:
    """A job table on each backend (replay's statements are translated for PostgreSQL)."""
    with open_store(store_location) as store:
        yield JobQueue(store)


def _segments(directory: Path) -> list[Path]:
    return sorted(directory.glob("jobs-*"))


def test_a_line_round_trips_and_a_torn_one_is_refused() -> None:
    job = pending_job(_turn(1))
    line = encode(job)
    assert line.endswith(b"\n") and KEY.encode() not in line  # redacted before it is written
    assert decode(line) == job
    assert decode(line[: len(line) // 2]) is None
    assert decode(b'{"not": "a job"}') is None


def test_appended_jobs_are_on_disk_until_folded(tmp_path: Path) -> None:
    journal = JobJournal(tmp_path / "journal")
    jobs = [pending_job(_turn(n)) for n in range(3)]
    number = journal.append(jobs[:2])
    assert journal.append(jobs[2:]) == number
    (segment,) = _segments(tmp_path / "journal")
    assert [decode(line) for line in segment.read_bytes().splitlines()] == jobs
    assert journal.unfolded == 3
    journal.folded([number, number])
    assert segment.stat().st_size > 0  # one job is not in the table yet
    journal.folded([number])
    assert segment.stat().st_size == 0 and journal.unfolded == 0  # emptied, still in use
    journal.close()
    assert _segments(tmp_path / "journal") == []


def test_full_segments_are_rotated_and_deleted_once_folded(tmp_path: Path) -> None:
    journal = JobJournal(tmp_path / "journal", segment_bytes=1)  # one append per segment
    first = journal.append([pending_job(_turn(1))])
    second = journal.append([pending_job(_turn(2))])
    assert first != second and len(_segments(tmp_path / "journal")) == 2
    journal.folded([first])
    assert len(_segments(tmp_path / "journal")) == 1
    journal.close()  # the second's job is not in the table: its segment stays for a replay
    assert len(_segments(tmp_path / "journal")) == 1


def test_a_closed_journal_with_unfolded_jobs_is_replayed_once(
    tmp_path: Path, queue: JobQueue
) -> None:
    journal = JobJournal(tmp_path / "journal")
    jobs = [pending_job(_turn(n)) for n in range(3)]
    journal.append(jobs)
    queue.replay(jobs[:1])  # one had reached the table before the process went away
    journal.close()

    later = JobJournal(tmp_path / "journal")
    assert later.recover(queue.replay) == 3
    assert sorted(job.id for job in queue.list()) == sorted(job.id for job in jobs)
    assert {job.turn.request_id for job in queue.list()} == {"req-0", "req-1", "req-2"}
    assert all(KEY not in job.turn.user_message for job in queue.list())
    assert _segments(tmp_path / "journal") == []
    assert later.recover(queue.replay) == 0
    assert len(queue.list()) == 3


def test_a_live_processs_segments_are_left_alone(tmp_path: Path, queue: JobQueue) -> None:
    alive = JobJournal(tmp_path / "journal")
    alive.append([pending_job(_turn(1))])
    other = JobJournal(tmp_path / "journal")
    assert other.recover(queue.replay) == 0  # its flock is held
    assert queue.list() == [] and len(_segments(tmp_path / "journal")) == 1
    alive.close()


def test_a_killed_writers_jobs_are_recovered_and_a_torn_line_skipped(
    tmp_path: Path, queue: JobQueue
) -> None:
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from datetime import UTC, datetime
        from extractor.jobs import pending_job
        from extractor.journal import JobJournal
        from extractor.turn import Turn
        journal = JobJournal(Path({str(tmp_path / "journal")!r}))
        for n in range(5):
            turn = Turn(request_id=f"killed-{{n}}", user_id="ana", model="m",
                        user_message=f"m {{n}}", created_at=datetime.now(UTC))
            journal.append([pending_job(turn)])
        print("appended", flush=True)
        time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "appended"
        assert JobJournal(tmp_path / "journal").recover(queue.replay) == 0  # still alive
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        proc.stdout.close()  # type: ignore[union-attr]
    (segment,) = _segments(tmp_path / "journal")
    with segment.open("ab") as torn:  # a write the kill cut short
        torn.write(encode(pending_job(_turn(9)))[:40])
    assert JobJournal(tmp_path / "journal").recover(queue.replay) == 5
    assert sorted(job.turn.request_id for job in queue.list()) == [f"killed-{n}" for n in range(5)]
    assert _segments(tmp_path / "journal") == []


def test_replay_skips_ids_the_table_has(queue: JobQueue) -> None:
    jobs: list[PendingJob] = [pending_job(_turn(n)) for n in range(4)]
    queue.replay(jobs[:2])
    queue.replay(jobs)
    assert sorted(job.id for job in queue.list()) == sorted(job.id for job in jobs)
