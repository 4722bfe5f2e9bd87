"""Compaction's tables, `compaction_runs` and `compaction_scopes`: named migrations
(`compaction:<name>`), in order, applied to the store's file by `BeliefStore.ensure_schema` when
a compactor is first made on it."""

from __future__ import annotations

from beliefs.store.migrations import Migration

COMPACTION = Migration(
    "compaction",
    "runs_and_scopes",  # runs, and per-scope examination state
    (
        """
        CREATE TABLE compaction_runs (
            id VARCHAR PRIMARY KEY,
            status VARCHAR NOT NULL
                CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
            trigger VARCHAR NOT NULL,
            user_id VARCHAR,
            scope VARCHAR,
            started_at TIMESTAMPTZ NOT NULL,
            finished_at TIMESTAMPTZ,
            duration_ms DOUBLE,
            examined INTEGER NOT NULL DEFAULT 0,
            clusters INTEGER NOT NULL DEFAULT 0,
            merged INTEGER NOT NULL DEFAULT 0,
            superseded INTEGER NOT NULL DEFAULT 0,
            flagged INTEGER NOT NULL DEFAULT 0,
            aliased INTEGER NOT NULL DEFAULT 0,
            promoted INTEGER NOT NULL DEFAULT 0,
            expired INTEGER NOT NULL DEFAULT 0,
            purged INTEGER NOT NULL DEFAULT 0,
            skipped_scopes INTEGER NOT NULL DEFAULT 0,
            errors JSON NOT NULL DEFAULT '[]',
            changes JSON NOT NULL DEFAULT '[]'
        )
        """,
        "CREATE INDEX compaction_runs_started ON compaction_runs (started_at)",
        """
        CREATE TABLE compaction_scopes (
            user_id VARCHAR NOT NULL,
            scope_key VARCHAR NOT NULL,
            fingerprint VARCHAR NOT NULL,
            examined_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (user_id, scope_key)
        )
        """,
    ),
)

MIGRATIONS: list[Migration] = [COMPACTION]
