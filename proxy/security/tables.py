"""The access package's tables, `access_secret` and `access_events` (what replicas share of
sessions and wrong keys) and `access_tokens`: named migrations (`security:<name>`), in order,
that the runtime applies to the store (`BeliefStore.ensure_schema`) when it starts, and
`tenure tokens` before it writes."""

from __future__ import annotations

from beliefs.store.migrations import Migration

# access shared by replicas: the session secret, revoked sessions, wrong-key attempts
ACCESS_SHARED = Migration(
    "security",
    "shared_access",
    (
        "CREATE TABLE access_secret (id INTEGER PRIMARY KEY, secret VARCHAR NOT NULL)",
        "CREATE SEQUENCE access_events_seq START 1",
        """
        CREATE TABLE access_events (
            seq BIGINT PRIMARY KEY DEFAULT nextval('access_events_seq'),
            origin VARCHAR NOT NULL,
            kind VARCHAR NOT NULL CHECK (kind IN ('revoked', 'failed')),
            value VARCHAR NOT NULL,
            "at" TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
        )
        """,
    ),
)

# one row per token (its hash, never the token), whom it acts for, revocation
ACCESS_TOKENS = Migration(
    "security",
    "access_tokens",
    (
        """
        CREATE TABLE access_tokens (
            id VARCHAR PRIMARY KEY,
            token_hash VARCHAR NOT NULL UNIQUE,
            user_id VARCHAR,
            agents VARCHAR NOT NULL,
            scopes VARCHAR NOT NULL,
            created_at TIMESTAMPTZ NOT NULL,
            revoked_at TIMESTAMPTZ
        )
        """,
    ),
)

MIGRATIONS: list[Migration] = [ACCESS_SHARED, ACCESS_TOKENS]
