"""Numbered schema migrations, recorded in `schema_migrations` and applied on open.

Other packages append their own numbers to `MIGRATIONS` here: 1 = beliefs core,
2 = injections, 3 = jobs, 4 = conflicts, 8 = rules, 9 = compaction. A migration never changes
once released.
"""

from __future__ import annotations

from typing import NamedTuple

import duckdb

from beliefs.rules import DEFAULT_RULES, Rule


class Migration(NamedTuple):
    number: int
    name: str
    statements: tuple[str, ...]


BELIEFS_CORE = Migration(
    1,
    "beliefs core: beliefs, belief_events, personas",
    (
        """
        CREATE TABLE beliefs (
            id VARCHAR PRIMARY KEY,
            user_id VARCHAR NOT NULL,
            agent_id VARCHAR,
            type VARCHAR NOT NULL,
            subtype VARCHAR,
            canonical_name VARCHAR NOT NULL,
            aliases VARCHAR[] NOT NULL,
            rejected_alternatives VARCHAR[] NOT NULL,
            content VARCHAR NOT NULL,
            why_it_matters VARCHAR NOT NULL,
            scope VARCHAR[] NOT NULL,
            epistemic_status VARCHAR NOT NULL,
            confidence DOUBLE NOT NULL,
            pinned BOOLEAN NOT NULL,
            memory_class VARCHAR,
            delivery VARCHAR NOT NULL,
            review_state VARCHAR NOT NULL,
            source_type VARCHAR NOT NULL,
            user_edited BOOLEAN NOT NULL,
            participants VARCHAR[] NOT NULL,
            reinforcement_count INTEGER NOT NULL,
            last_reinforced_at TIMESTAMPTZ,
            created_at TIMESTAMPTZ NOT NULL,
            updated_at TIMESTAMPTZ NOT NULL,
            expires_at TIMESTAMPTZ,
            superseded_by VARCHAR,
            invalidated_at TIMESTAMPTZ,
            invalidation_reason VARCHAR,
            resolved_at TIMESTAMPTZ,
            deleted_at TIMESTAMPTZ,
            provenance JSON NOT NULL
        )
        """,
        "CREATE INDEX beliefs_user_name ON beliefs (user_id, canonical_name)",
        "CREATE INDEX beliefs_superseded_by ON beliefs (superseded_by)",
        "CREATE SEQUENCE belief_events_seq START 1",
        """
        CREATE TABLE belief_events (
            seq BIGINT PRIMARY KEY DEFAULT nextval('belief_events_seq'),
            belief_id VARCHAR NOT NULL,
            "at" TIMESTAMPTZ NOT NULL,
            event VARCHAR NOT NULL,
            actor VARCHAR,
            detail JSON NOT NULL
        )
        """,
        "CREATE INDEX belief_events_belief ON belief_events (belief_id)",
        """
        CREATE TABLE personas (
            user_id VARCHAR PRIMARY KEY,
            text VARCHAR NOT NULL,
            source VARCHAR NOT NULL CHECK (source IN ('operator', 'generated', 'deterministic')),
            inputs_hash VARCHAR,
            updated_at TIMESTAMPTZ NOT NULL
        )
        """,
    ),
)

GATEWAY = Migration(
    2,
    "gateway: injections, chat_state",
    (
        """
        CREATE TABLE injections (
            request_id VARCHAR NOT NULL,
            created_at TIMESTAMPTZ NOT NULL,
            user_id VARCHAR NOT NULL,
            agent_id VARCHAR,
            scopes VARCHAR[] NOT NULL,
            model VARCHAR,
            endpoint VARCHAR NOT NULL,
            query VARCHAR NOT NULL,
            layers JSON NOT NULL,
            belief_ids VARCHAR[] NOT NULL,
            persona BOOLEAN NOT NULL,
            approx_tokens INTEGER NOT NULL
        )
        """,
        "CREATE INDEX injections_request ON injections (request_id)",
        "CREATE INDEX injections_user_time ON injections (user_id, created_at)",
        """
        CREATE TABLE chat_state (
            user_id VARCHAR NOT NULL,
            agent_id VARCHAR NOT NULL,
            scopes VARCHAR[] NOT NULL,
            extract BOOLEAN NOT NULL,
            inject BOOLEAN NOT NULL,
            updated_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (user_id, agent_id)
        )
        """,
    ),
)

RULE_COLUMNS = (
    "id",
    "pattern",
    "bonus",
    "template",
    "memory_class",
    "default_key",
    "created_at",
    "updated_at",
)


def _literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, int | float):
        return repr(float(value))
    return "'" + str(value).replace("'", "''") + "'"


def add_default_rules(rules: tuple[Rule, ...] = DEFAULT_RULES) -> tuple[str, ...]:
    """INSERTs that add each default once: never again after the operator edits or deletes it."""
    out = []
    for rule in rules:
        values = ", ".join(
            "current_timestamp" if c in ("created_at", "updated_at") else _literal(getattr(rule, c))
            for c in RULE_COLUMNS
        )
        key = _literal(rule.default_key)
        out.append(
            f"INSERT INTO rules ({', '.join(RULE_COLUMNS)}) SELECT {values} "
            f"WHERE NOT EXISTS (SELECT 1 FROM rules WHERE default_key = {key})"
        )
    return tuple(out)


RULES = Migration(
    8,
    "namespace rules, with the bundled defaults",
    (
        """
        CREATE TABLE rules (
            id VARCHAR PRIMARY KEY,
            pattern VARCHAR NOT NULL,
            bonus DOUBLE NOT NULL,
            template VARCHAR,
            memory_class VARCHAR,
            default_key VARCHAR,
            created_at TIMESTAMPTZ NOT NULL,
            updated_at TIMESTAMPTZ NOT NULL,
            deleted_at TIMESTAMPTZ
        )
        """,
        *add_default_rules(),
    ),
)

# -- extraction (owned by the extractor; plain SQL so the store applies it on open) -------------

EXTRACTION_JOBS = Migration(
    3,
    "extraction jobs: the durable queue of turns awaiting extraction",
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

EXTRACTION_CONFLICTS = Migration(
    4,
    "conflicts: contradictions awaiting review",
    (
        """
        CREATE TABLE conflicts (
            id VARCHAR PRIMARY KEY,
            user_id VARCHAR NOT NULL,
            existing_id VARCHAR NOT NULL,
            new_id VARCHAR,
            proposed JSON,
            reason VARCHAR NOT NULL,
            status VARCHAR NOT NULL CHECK (status IN ('open', 'resolved')),
            resolution VARCHAR CHECK (
                resolution IS NULL OR resolution IN ('keep_existing', 'take_new', 'keep_both')
            ),
            job_id VARCHAR,
            created_at TIMESTAMPTZ NOT NULL,
            resolved_at TIMESTAMPTZ
        )
        """,
    ),
)

# -- compaction (owned by the compaction worker) ------------------------------------------------

COMPACTION = Migration(
    9,
    "compaction: runs and per-scope examination state",
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

# -- memory tools (the MCP endpoint records every tool call) -----------------------------------

MCP_CALLS = Migration(
    60,
    "memory tools: one row per MCP tool call (who, what, result)",
    (
        """
        CREATE TABLE mcp_calls (
            id VARCHAR PRIMARY KEY,
            created_at TIMESTAMPTZ NOT NULL,
            user_id VARCHAR NOT NULL,
            agent_id VARCHAR,
            scopes VARCHAR[] NOT NULL,
            transport VARCHAR NOT NULL,
            client VARCHAR,
            tool VARCHAR NOT NULL,
            arguments JSON NOT NULL,
            ok BOOLEAN NOT NULL,
            outcome VARCHAR NOT NULL,
            belief_ids VARCHAR[] NOT NULL,
            result JSON NOT NULL,
            duration_ms DOUBLE NOT NULL
        )
        """,
        "CREATE INDEX mcp_calls_user_time ON mcp_calls (user_id, created_at)",
    ),
)

MIGRATIONS: list[Migration] = [
    BELIEFS_CORE,
    GATEWAY,
    EXTRACTION_JOBS,
    EXTRACTION_CONFLICTS,
    RULES,
    COMPACTION,
    MCP_CALLS,
]

_LEDGER = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    number INTEGER PRIMARY KEY,
    name VARCHAR NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
)
"""


def applied(conn: duckdb.DuckDBPyConnection) -> set[int]:
    """Numbers already applied; empty for a fresh database."""
    exists = conn.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
    ).fetchone()
    if not exists or not exists[0]:
        return set()
    return {row[0] for row in conn.execute("SELECT number FROM schema_migrations").fetchall()}


def pending(conn: duckdb.DuckDBPyConnection) -> list[Migration]:
    done = applied(conn)
    return sorted((m for m in MIGRATIONS if m.number not in done), key=lambda m: m.number)


def migrate(conn: duckdb.DuckDBPyConnection) -> list[int]:
    """Apply every pending migration in order, each in its own transaction; returns numbers."""
    numbers = [m.number for m in MIGRATIONS]
    if len(set(numbers)) != len(numbers):
        raise ValueError(f"migration numbers are not unique: {sorted(numbers)}")
    conn.execute(_LEDGER)
    done: list[int] = []
    for migration in pending(conn):
        conn.execute("BEGIN TRANSACTION")
        try:
            for statement in migration.statements:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (number, name) VALUES (?, ?)",
                [migration.number, migration.name],
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        done.append(migration.number)
    return done
