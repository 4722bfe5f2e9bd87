"""The durable job table: a turn is written here before any work starts, and done exactly once."""

from __future__ import annotations

import builtins
import json
import logging
import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

from beliefs.model.models import as_utc, storable, storable_value, utcnow
from beliefs.store.belief_store import BeliefStore
from extractor.errors import JobNotFound, JobStateError
from extractor.migrations import MIGRATIONS
from extractor.redact import redact, redact_fields, redact_record
from extractor.schema import Skipped
from extractor.turn import Turn

log = logging.getLogger("tenure.extractor")

JobStatus = Literal["pending", "running", "done", "failed"]
JOB_STATUSES: tuple[str, ...] = get_args(JobStatus)

_COLUMNS = (
    "id, status, attempts, next_attempt_at, last_error, raw_output, written_ids, skipped, "
    "created_at, updated_at, finished_at, turn, suspect"
)


class Job(BaseModel):
    """One turn's extraction, as recorded in the `jobs` table."""

    model_config = ConfigDict(extra="forbid")

    id: str
    status: JobStatus
    attempts: int
    next_attempt_at: datetime | None
    last_error: str | None
    raw_output: str | None
    written_ids: list[str]
    skipped: list[Skipped]
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    turn: Turn
    # Done and wrote nothing, by a model that failed the canary: why "nothing" is not trusted.
    suspect: str | None = None


def new_job_id() -> str:
    return f"j-{secrets.token_hex(8)}"


_INSERT_CHUNK = 200


@dataclass(frozen=True, slots=True)
class PendingJob:
    """A job as it is inserted: its turn already redacted and encoded (`pending_job`), so the
    same row can be written to the journal first and into the table later."""

    id: str
    user_id: str
    request_id: str
    turn: str  # the redacted turn as JSON
    created_at: datetime

    def struct(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user_id": self.user_id,
            "request_id": self.request_id,
            "turn": self.turn,
            "created_at": self.created_at,
        }


# What people and models wrote, where a secret can be; the rest (identity, ids, the persona
# reference) is not walked.
_TEXT_FIELDS = ("user_message", "assistant_message", "tool_calls")


def pending_job(turn: Turn, now: datetime | None = None) -> PendingJob:
    """The turn, secrets redacted, as a pending job row with a fresh id."""
    redacted = redact_fields(turn.model_dump(mode="json"), _TEXT_FIELDS)
    encoded = json.dumps(redacted)
    if "\\ud" in encoded:  # a UTF-16 half escaped: perhaps a lone one, which the store refuses
        encoded = json.dumps(storable_value(redacted))
    return PendingJob(
        new_job_id(), storable(turn.user_id), turn.request_id, encoded, now or utcnow()
    )


_INSERT_PENDING = (
    "INSERT INTO jobs (id, status, user_id, request_id, turn, created_at, updated_at) "
    "SELECT r.id, 'pending', r.user_id, r.request_id, r.turn, r.created_at, r.created_at FROM "
    "(SELECT unnest(?::STRUCT(id VARCHAR, user_id VARCHAR, request_id VARCHAR, turn VARCHAR, "
    "created_at TIMESTAMPTZ)[]) AS r)"
)

_INSERT_ONE = (
    "INSERT INTO jobs (id, status, user_id, request_id, turn, created_at, updated_at) "
    "VALUES (?, 'pending', ?, ?, ?, ?, ?)"
)


class JobQueue:
    """Enqueue, claim, complete and fail jobs; every call runs on the store's thread.

    A queue marks what it claims with its own token, so `running` rows with another token were
    left behind by a process that died: `claim` takes them again. So are `running` rows with
    this queue's token that it no longer holds (a result whose write was rolled back). Use one
    queue per database.
    """

    def __init__(
        self, store: BeliefStore, *, lease_s: float = 0.0, holder: str | None = None
    ) -> None:
        """`lease_s`: how long another process's running job is left to it before being taken
        over (0: at once, for a store one process owns; replicas on PostgreSQL share jobs).
        `holder`: the replica id written into the claim token, so a lease names its replica."""
        store.ensure_schema(MIGRATIONS)
        self.store = store
        self.lease_s = lease_s
        self.token = f"{holder}:{secrets.token_hex(6)}" if holder else secrets.token_hex(6)
        self._listeners: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._holding: set[str] = set()  # ids claimed and not yet completed, failed or released
        self.shed = 0  # pending jobs parked because the backlog was full

    def on_enqueue(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` (on the store thread) after each enqueue; returns its remover."""
        with self._lock:
            self._listeners.append(listener)

        def remove() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove

    def enqueue(self, turn: Turn) -> str:
        """Record the turn (secrets redacted) as a pending job; returns the job id."""
        return self.enqueue_many([turn])[0]

    def enqueue_many(self, turns: Sequence[Turn]) -> builtins.list[str]:
        """Record turns as pending jobs (secrets redacted); returns the job ids in order."""
        now = utcnow()
        return self.insert([pending_job(turn, now) for turn in turns])

    def insert(
        self, jobs: Sequence[PendingJob], *, skip_existing: bool = False
    ) -> builtins.list[str]:
        """Write prepared jobs in one multi-row INSERT per chunk (a single-row INSERT costs
        several times more per row here); returns their ids. `skip_existing` leaves out the
        ids already in the table (replaying a journal that was partly written before)."""
        if skip_existing and jobs:
            present = {
                row[0]
                for row in self.store.execute(
                    "SELECT id FROM jobs WHERE list_contains(?, id)", [[job.id for job in jobs]]
                ).fetchall()
            }
            jobs = [job for job in jobs if job.id not in present]
        if len(jobs) == 1:  # a lone turn: values bound directly plan faster than a struct
            job = jobs[0]
            self.store.execute(
                _INSERT_ONE,
                [job.id, job.user_id, job.request_id, job.turn, job.created_at, job.created_at],
            )
        else:
            for start in range(0, len(jobs), _INSERT_CHUNK):
                chunk = [job.struct() for job in jobs[start : start + _INSERT_CHUNK]]
                # One list-of-structs parameter: binding five per row cost more than the insert.
                self.store.execute(_INSERT_PENDING, [chunk])
        if jobs:
            self._notify()
        return [job.id for job in jobs]

    def replay(self, jobs: Sequence[PendingJob]) -> None:
        """Write journaled jobs in one transaction, leaving out those the table already has."""
        with self.store.transaction():
            self.insert(jobs, skip_existing=True)

    def _notify(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener()
            except Exception:  # a waking worker must never fail the enqueue: the row is written
                log.exception("enqueue listener failed")

    def claim(self, now: datetime | None = None) -> Job | None:
        """The oldest due pending job, or one left running by a dead process, now running."""
        jobs = self.claim_many(1, now)
        return jobs[0] if jobs else None

    def claim_many(self, limit: int, now: datetime | None = None) -> builtins.list[Job]:
        """Up to `limit` due jobs, oldest first, marked running in one statement."""
        now = now or utcnow()
        # Replicas skip the rows another one is claiming this instant (PostgreSQL row locks).
        skip = " FOR UPDATE SKIP LOCKED" if self.store.dialect == "postgresql" else ""
        rows = self.store.execute(
            "UPDATE jobs SET status = 'running', attempts = attempts + 1, claimed_by = ?, "
            "updated_at = ? WHERE id IN (SELECT id FROM jobs WHERE (status = 'pending' AND "
            "(next_attempt_at IS NULL OR next_attempt_at <= ?)) OR (status = 'running' AND "
            "CASE WHEN claimed_by IS DISTINCT FROM ? THEN updated_at <= ? "
            "ELSE NOT list_contains(?, id) END) "
            f"ORDER BY created_at, id LIMIT ?{skip}) "
            f"RETURNING {_COLUMNS}",
            [
                self.token,
                now,
                now,
                self.token,
                now - timedelta(seconds=self.lease_s),
                sorted(self._holding),
                max(0, int(limit)),
            ],
        ).fetchall()
        jobs = sorted((_job(row) for row in rows), key=lambda j: (j.created_at, j.id))
        self._holding.update(job.id for job in jobs)
        return jobs

    def backlog(self, now: datetime | None = None) -> tuple[int, float]:
        """(pending jobs, age in seconds of the oldest of them; 0 when none)."""
        count, oldest = self.store.execute(
            "SELECT count(*), min(created_at) FROM jobs WHERE status = 'pending'"
        ).fetchone() or (0, None)
        if oldest is None:
            return int(count), 0.0
        age = ((now or utcnow()) - as_utc(oldest)).total_seconds()
        return int(count), max(0.0, age)

    def leases(
        self, now: datetime | None = None, limit: int = 100
    ) -> builtins.list[dict[str, Any]]:
        """The jobs running now, oldest claim first: which replica holds each (None when its
        queue was not named) and when its lease runs out and another replica may take it."""
        now = now or utcnow()
        rows = self.store.execute(
            "SELECT id, claimed_by, updated_at, attempts FROM jobs WHERE status = 'running' "
            "ORDER BY updated_at, id LIMIT ?",
            [int(limit)],
        ).fetchall()
        out = []
        for job_id, claimed_by, claimed_at, attempts in rows:
            holder, sep, _ = (claimed_by or "").rpartition(":")
            expires = as_utc(claimed_at) + timedelta(seconds=self.lease_s)
            out.append(
                {
                    "job_id": job_id,
                    "replica": holder if sep else None,
                    "mine": claimed_by == self.token,
                    "attempt": int(attempts),
                    "claimed_at": as_utc(claimed_at).isoformat(),
                    "lease_expires_at": expires.isoformat(),
                    "expired": expires <= now,
                }
            )
        return out

    def shed_over(self, limit: int) -> int:
        """Park the oldest pending jobs beyond `limit` as failed (their turns stay stored and
        can be retried); returns how many. The newest turns are the ones extracted first."""
        if limit <= 0:
            return 0
        rows = self.store.execute(
            "UPDATE jobs SET status = 'failed', last_error = ?, claimed_by = NULL, "
            "updated_at = ?, finished_at = ? WHERE id IN (SELECT id FROM jobs "
            "WHERE status = 'pending' ORDER BY created_at DESC, id DESC OFFSET ?) RETURNING id",
            [
                f"the extraction backlog was full ({limit} pending jobs); the turn is kept: "
                "retry it from /status or with `tenure jobs retry`",
                utcnow(),
                utcnow(),
                int(limit),
            ],
        ).fetchall()
        self.shed += len(rows)
        if rows:
            log.error("extraction backlog full: %d oldest pending job(s) parked", len(rows))
        return len(rows)

    def renew_held(self, now: datetime | None = None) -> int:
        """Keep the lease of every job this queue holds, from its claim until its result is
        written (the model call, a second look, the wait for the write); returns how many."""
        if not self._holding:
            return 0
        rows = self.store.execute(
            "UPDATE jobs SET updated_at = ? WHERE status = 'running' AND claimed_by = ? "
            "AND list_contains(?, id) RETURNING id",
            [now or utcnow(), self.token, sorted(self._holding)],
        ).fetchall()
        return len(rows)

    def release(self, job_id: str) -> None:
        """Give a claimed job back untouched (its attempt does not count)."""
        self._holding.discard(job_id)
        self.store.execute(
            "UPDATE jobs SET status = 'pending', attempts = greatest(attempts - 1, 0), "
            "claimed_by = NULL, updated_at = ? WHERE id = ? AND status = 'running'",
            [utcnow(), job_id],
        )

    def release_claimed(self) -> int:
        """Give back every job this queue holds (on shutdown); returns how many."""
        self._holding.clear()
        rows = self.store.execute(
            "UPDATE jobs SET status = 'pending', attempts = greatest(attempts - 1, 0), "
            "claimed_by = NULL, updated_at = ? WHERE status = 'running' AND claimed_by = ? "
            "RETURNING id",
            [utcnow(), self.token],
        ).fetchall()
        return len(rows)

    def complete(self, job_id: str, written_ids: Sequence[str], skipped: Sequence[Skipped]) -> None:
        """Mark done; call inside the transaction that wrote the beliefs, so both land or neither.

        Inside a transaction the mark is written with every other job completed in it, in one
        statement just before the commit; the error below then comes from that commit.

        Raises:
            JobStateError: the job is not running (already done, or retried meanwhile).
        """
        # Not held any more: if the transaction rolls back, the row stays `running` with this
        # token and `claim` takes it again instead of leaving it running forever.
        self._holding.discard(job_id)
        done = (
            job_id,
            json.dumps(list(written_ids)),
            json.dumps(redact_record([s.model_dump() for s in skipped])),
            utcnow(),
        )
        self.store.defer("jobs.complete", self._complete_many, done)

    def _complete_many(self, items: builtins.list[tuple[str, str, str, datetime]]) -> None:
        ids = [item[0] for item in items]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise JobStateError(f"job {twice[0]} is not running; it was not completed twice")
        if len(items) == 1:
            job_id, written, skipped, now = items[0]
            rows = self.store.execute(
                "UPDATE jobs SET status = 'done', written_ids = ?, skipped = ?, last_error = NULL, "
                "claimed_by = NULL, updated_at = ?, finished_at = ? "
                "WHERE id = ? AND status = 'running' AND claimed_by = ? RETURNING id",
                [written, skipped, now, now, job_id, self.token],
            ).fetchall()
        else:
            rows = self.store.execute(
                "UPDATE jobs SET status = 'done', written_ids = v.written, skipped = v.skipped, "
                "last_error = NULL, claimed_by = NULL, updated_at = v.at, finished_at = v.at "
                "FROM (SELECT unnest(?::VARCHAR[]) AS id, unnest(?::VARCHAR[]) AS written, "
                "unnest(?::VARCHAR[]) AS skipped, unnest(?::TIMESTAMPTZ[]) AS at) AS v "
                "WHERE jobs.id = v.id AND jobs.status = 'running' AND jobs.claimed_by = ? "
                "RETURNING jobs.id",
                [*(list(column) for column in zip(*items, strict=True)), self.token],
            ).fetchall()
        missing = [i for i in ids if i not in {row[0] for row in rows}]
        if missing:
            raise JobStateError(f"job {missing[0]} is not running; it was not completed twice")

    def fail(
        self,
        job_id: str,
        error: str,
        raw_output: str | None = None,
        retry_at: datetime | None = None,
    ) -> None:
        """Record a failed attempt: pending again at `retry_at`, or parked as `failed`."""
        self._holding.discard(job_id)
        now = utcnow()
        status = "pending" if retry_at is not None else "failed"
        # One record: the error often quotes the reply it could not read.
        kept = redact_record({"error": error, "raw": raw_output})
        self.store.execute(
            "UPDATE jobs SET status = ?, last_error = ?, raw_output = coalesce(?, raw_output), "
            "next_attempt_at = ?, claimed_by = NULL, updated_at = ?, finished_at = ? "
            "WHERE id = ? AND status = 'running'",
            [
                status,
                kept["error"][:4000],
                kept["raw"],
                retry_at,
                now,
                None if retry_at is not None else now,
                job_id,
            ],
        )

    def retry(self, job_id: str) -> Job:
        """Run a failed (or waiting) job again now, with a fresh count of attempts.

        Raises:
            JobNotFound: no job with that id.
            JobStateError: the job is running (being extracted right now) or done.
        """
        job = self.get(job_id)
        if job.status == "done" or (job.status == "running" and job_id in self._holding):
            raise JobStateError(
                f"job {job_id} is {job.status}; only failed or pending jobs can be retried"
            )
        self.store.execute(
            "UPDATE jobs SET status = 'pending', attempts = 0, next_attempt_at = NULL, "
            "claimed_by = NULL, finished_at = NULL, updated_at = ? WHERE id = ?",
            [utcnow(), job_id],
        )
        return self.get(job_id)

    def get(self, job_id: str) -> Job:
        """Raises JobNotFound when there is no such job."""
        row = self.store.execute(f"SELECT {_COLUMNS} FROM jobs WHERE id = ?", [job_id]).fetchone()
        if row is None:
            raise JobNotFound(f"no job {job_id!r}; list jobs with `tenure jobs list`")
        return _job(row)

    def list(self, status: str | None = None, limit: int = 100) -> builtins.list[Job]:
        """Newest first, optionally only one status."""
        if status is not None and status not in JOB_STATUSES:
            raise JobStateError(
                f"unknown job status {status!r}; use one of {', '.join(JOB_STATUSES)}"
            )
        sql = f"SELECT {_COLUMNS} FROM jobs"
        params: builtins.list[Any] = []
        if status is not None:
            sql += " WHERE status = ?"
            params.append(status)
        sql += f" ORDER BY created_at DESC, id DESC LIMIT {max(0, int(limit))}"
        return [_job(row) for row in self.store.execute(sql, params).fetchall()]

    def counts(self) -> dict[str, int]:
        """Jobs per status (every status present, zero included)."""
        rows = self.store.execute("SELECT status, count(*) FROM jobs GROUP BY status").fetchall()
        out = dict.fromkeys(JOB_STATUSES, 0)
        out.update({status: int(n) for status, n in rows})
        return out

    def mark_suspect(self, reasons: dict[str, str]) -> None:
        """Mark done jobs whose empty result is not trusted: job id -> why, one statement."""
        self._set_text("suspect", reasons)

    def keep_raw_output(self, raw_outputs: dict[str, str]) -> None:
        """Record the model's raw reply (redacted) on done jobs: job id -> text, one statement."""
        self._set_text("raw_output", {k: redact(v) for k, v in raw_outputs.items()})

    def _set_text(self, column: Literal["suspect", "raw_output"], values: dict[str, str]) -> None:
        if not values:
            return
        self.store.execute(
            f"UPDATE jobs SET {column} = v.text FROM (SELECT unnest(?::VARCHAR[]) AS id, "
            "unnest(?::VARCHAR[]) AS text) AS v WHERE jobs.id = v.id",
            [list(values), list(values.values())],
        )


def _job(row: Sequence[Any]) -> Job:
    return Job(
        id=row[0],
        status=row[1],
        attempts=row[2],
        next_attempt_at=as_utc(row[3]),
        last_error=row[4],
        raw_output=row[5],
        written_ids=json.loads(row[6]),
        skipped=[Skipped.model_validate(s) for s in json.loads(row[7])],
        created_at=as_utc(row[8]),
        updated_at=as_utc(row[9]),
        finished_at=as_utc(row[10]),
        turn=Turn.model_validate_json(row[11]),
        suspect=row[12],
    )
