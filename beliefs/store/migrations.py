"""Named schema migrations, recorded in `schema_migrations` and applied on open.

Each package owns its tables and keeps their migrations, in order, in its own module; a
migration is known by `<package>:<name>` (`beliefs:core`, `gateway:add_persona_reference`), so
packages never need to agree on anything but their own names. All packages share one ledger in
the store's file. The store applies this package's list on open and another package's list
through `BeliefStore.ensure_schema`; each pending migration runs in its own transaction, in
list order. A released migration never changes: a new column is a new migration appended to
its package's list (docs/migrations.md).

Earlier releases recorded migrations by hand-picked numbers unique across packages; the
runner's own migration, `ledger:names_for_numbers`, rewrites such a ledger by name once
(`NUMBERED`), so an existing store re-runs nothing.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from typing import NamedTuple

from beliefs.model.rules import DEFAULT_RULES, Rule
from beliefs.store.connection import Connection

_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


class Migration(NamedTuple):
    package: str
    name: str  # lower_snake_case, unique within the package
    statements: tuple[str, ...]

    @property
    def key(self) -> str:
        """How the ledger records it: `<package>:<name>`."""
        return f"{self.package}:{self.name}"


BELIEFS_CORE = Migration(
    "beliefs",
    "core",  # beliefs, belief_events, personas
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
    "beliefs",
    "rules",  # namespace rules, with the bundled defaults
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
    "beliefs",
    "conflicts",  # contradictions awaiting review
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
    "beliefs",
    "add_belief_shared",  # an agent's belief shared with every agent of the user
    (
        # DuckDB alters no table an index depends on: the indexes go and come back
        "DROP INDEX IF EXISTS beliefs_user_name",
        "DROP INDEX IF EXISTS beliefs_superseded_by",
        "ALTER TABLE beliefs ADD COLUMN IF NOT EXISTS shared BOOLEAN DEFAULT FALSE",
        "CREATE INDEX IF NOT EXISTS beliefs_user_name ON beliefs (user_id, canonical_name)",
        "CREATE INDEX IF NOT EXISTS beliefs_superseded_by ON beliefs (superseded_by)",
    ),
)

MIGRATIONS: list[Migration] = [BELIEFS_CORE, EXTRACTION_CONFLICTS, RULES, BELIEF_SHARED]

# What each number of a numbered ledger stands for. Never edit: it describes released stores.
NUMBERED: dict[int, str] = {
    1: "beliefs:core",
    2: "gateway:injections_and_chat_state",
    3: "extractor:jobs",
    4: "beliefs:conflicts",
    8: "beliefs:rules",
    9: "compaction:runs_and_scopes",
    33: "extractor:add_job_suspect",
    60: "gateway:mcp_calls",
    100: "beliefs:change_feed",
    101: "security:shared_access",
    120: "gateway:turn_memory",
    132: "security:access_tokens",
    143: "gateway:add_persona_reference",
}
LEDGER_MIGRATION = "ledger:names_for_numbers"
_LEDGER = """
CREATE TABLE schema_migrations (
    name VARCHAR PRIMARY KEY,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
)
"""


def _ledger_columns(conn: Connection) -> set[str]:
    """The ledger's columns: empty for a new file, `number` in a numbered one."""
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_name = 'schema_migrations' AND table_schema = current_schema()"
    ).fetchall()
    return {str(r[0]) for r in rows}


def numbered_name(number: int) -> str:
    """A number's name; one no release used (a local experiment) is kept as `numbered:<n>`."""
    return NUMBERED.get(number, f"numbered:{number}")


def applied(conn: Connection) -> set[str]:
    """Keys already applied; empty for a new file. A numbered ledger is read by its names."""
    columns = _ledger_columns(conn)
    if "number" in columns:
        rows = conn.execute("SELECT number FROM schema_migrations").fetchall()
        return {numbered_name(int(r[0])) for r in rows}
    if not columns:
        return set()
    return {str(r[0]) for r in conn.execute("SELECT name FROM schema_migrations").fetchall()}


def check(migrations: Sequence[Migration]) -> None:
    """Raises ValueError: a name that is not lower_snake_case, or one used twice in a package."""
    keys = [m.key for m in migrations]
    for m in migrations:
        if not (_NAME.match(m.package) and _NAME.match(m.name)):
            raise ValueError(f"migration {m.key!r}: package and name must be lower_snake_case")
    if len(set(keys)) != len(keys):
        twice = sorted({k for k in keys if keys.count(k) > 1})
        raise ValueError(f"migration names are used twice: {', '.join(twice)}")


def pending(conn: Connection, migrations: Sequence[Migration] | None = None) -> list[Migration]:
    """The migrations of `migrations` (this package's when None) not yet applied, in order.

    Raises:
        ValueError: see `check`.
    """
    chosen = MIGRATIONS if migrations is None else migrations
    check(chosen)
    done = applied(conn)
    return [m for m in chosen if m.key not in done]


def migrate(conn: Connection, migrations: Sequence[Migration] | None = None) -> list[str]:
    """Apply every pending migration in order, each in its own transaction; returns their keys.

    On PostgreSQL, processes starting together take turns (an advisory lock).
    """
    lock = getattr(conn, "migration_lock", None)
    with lock() if lock is not None else contextlib.nullcontext():
        _upgrade_ledger(conn)
        return _migrate(conn, migrations)


def _upgrade_ledger(conn: Connection) -> None:
    """The runner's own migration: a new ledger, or a numbered one rewritten by name."""
    columns = _ledger_columns(conn)
    if columns and "number" not in columns:
        return
    conn.execute("BEGIN TRANSACTION")
    try:
        numbered = []
        if columns:
            numbered = conn.execute(
                "SELECT number, applied_at FROM schema_migrations ORDER BY number"
            ).fetchall()
            conn.execute("DROP TABLE schema_migrations")
        conn.execute(_LEDGER)
        for number, at in numbered:
            conn.execute(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                [numbered_name(int(number)), at],
            )
        conn.execute("INSERT INTO schema_migrations (name) VALUES (?)", [LEDGER_MIGRATION])
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _migrate(conn: Connection, migrations: Sequence[Migration] | None) -> list[str]:
    done: list[str] = []
    for migration in pending(conn, migrations):
        conn.execute("BEGIN TRANSACTION")
        try:
            for statement in migration.statements:
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations (name) VALUES (?)", [migration.key])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        done.append(migration.key)
    return done
