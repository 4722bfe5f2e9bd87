"""The gateway's tables, `injections` and `chat_state`: numbered migrations the runtime applies
to the store's file (`BeliefStore.ensure_schema`) when it starts."""

from __future__ import annotations

from beliefs.migrations import Migration

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

MIGRATIONS: list[Migration] = [GATEWAY]
