"""The extractor's table, `jobs`: named migrations (`extractor:<name>`), in order, applied to
the store's file by `BeliefStore.ensure_schema` when a job queue is first made on it."""

from __future__ import annotations

from beliefs.store.migrations import Migration

EXTRACTION_JOBS = Migration(
    "extractor",
    "jobs",  # the durable queue of turns awaiting extraction
    (
        """
        CREATE TABLE jobs (
            id VARCHAR PRIMARY KEY,
            status VARCHAR NOT NULL
                CHECK (status IN ('pending', 'running', 'done', 'failed')),
            user_id VARCHAR NOT NULL,
            request_id VARCHAR NOT NULL,
            turn JSON NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at TIMESTAMPTZ,
            claimed_by VARCHAR,
            last_error VARCHAR,
            raw_output VARCHAR,
            written_ids JSON NOT NULL DEFAULT '[]',
            skipped JSON NOT NULL DEFAULT '[]',
            created_at TIMESTAMPTZ NOT NULL,
            updated_at TIMESTAMPTZ NOT NULL,
            finished_at TIMESTAMPTZ
        )
        """,
    ),
)

# jobs.suspect: why a done job's empty result is not trusted (its model failed the canary)
JOB_SUSPECT = Migration(
    "extractor",
    "add_job_suspect",
    ("ALTER TABLE jobs ADD COLUMN suspect VARCHAR",),
)

MIGRATIONS: list[Migration] = [EXTRACTION_JOBS, JOB_SUSPECT]
