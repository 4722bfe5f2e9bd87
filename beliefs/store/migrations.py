"""Numbered schema migrations, recorded in `schema_migrations` and applied on open.

Each package owns its tables and keeps their migrations in its own `migrations.py`; they share
one ledger in the store's file, so numbers are unique across packages: 1 = beliefs core,
2 = gateway (`proxy`), 3 = jobs (`extractor`), 4 = conflicts, 8 = rules, 9 = compaction. The
store applies this package's set on open and another package's set through
`BeliefStore.ensure_schema`. A migration never changes once released.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import NamedTuple

from beliefs.model.rules import DEFAULT_RULES, Rule
from beliefs.store.connection import Connection


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

# the table's reads and writes are `beliefs.store.conflicts`; the extractor and compaction open them
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

# An agent's belief stays its own (`agent_id` keeps the author) until it is shared with
# every agent of the user; existing rows are not shared.
BELIEF_SHARED = Migration(
    15,
    "beliefs: shared, an agent's belief shared with every agent of the user",
    (
        # DuckDB alters no table an index depends on: the indexes go and come back
        "DROP INDEX beliefs_user_name",
        "DROP INDEX beliefs_superseded_by",
        "ALTER TABLE beliefs ADD COLUMN shared BOOLEAN NOT NULL DEFAULT FALSE",
        "CREATE INDEX beliefs_user_name ON beliefs (user_id, canonical_name)",
        "CREATE INDEX beliefs_superseded_by ON beliefs (superseded_by)",
    ),
)

MIGRATIONS: list[Migration] = [BELIEFS_CORE, EXTRACTION_CONFLICTS, RULES, BELIEF_SHARED]

_LEDGER = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    number INTEGER PRIMARY KEY,
    name VARCHAR NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
)
"""


def applied(conn: Connection) -> dict[int, str]:
    """Numbers already applied, with the name each was recorded under; empty for a new file."""
    exists = conn.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations' "
        "AND table_schema = current_schema()"
    ).fetchone()
    if not exists or not exists[0]:
        return {}
    return dict(conn.execute("SELECT number, name FROM schema_migrations").fetchall())


def pending(conn: Connection, migrations: Sequence[Migration] | None = None) -> list[Migration]:
    """The migrations of `migrations` (this package's when None) not yet applied, in order.

    Raises:
        ValueError: a number is recorded under another name (two packages chose one number).
    """
    chosen = MIGRATIONS if migrations is None else migrations
    numbers = [m.number for m in chosen]
    if len(set(numbers)) != len(numbers):
        raise ValueError(f"migration numbers are not unique: {sorted(numbers)}")
    done = applied(conn)
    for m in chosen:
        if m.number in done and done[m.number] != m.name:
            raise ValueError(
                f"migration {m.number} ({m.name!r}) is already taken by {done[m.number]!r}; "
                "give it an unused number"
            )
    return sorted((m for m in chosen if m.number not in done), key=lambda m: m.number)


def migrate(conn: Connection, migrations: Sequence[Migration] | None = None) -> list[int]:
    """Apply every pending migration in order, each in its own transaction; returns numbers.

    On PostgreSQL, processes starting together take turns (an advisory lock).
    """
    lock = getattr(conn, "migration_lock", None)
    with lock() if lock is not None else contextlib.nullcontext():
        return _migrate(conn, migrations)


def _migrate(conn: Connection, migrations: Sequence[Migration] | None) -> list[int]:
    conn.execute(_LEDGER)
    done: list[int] = []
    for migration in pending(conn, migrations):
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
