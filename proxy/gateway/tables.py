"""The gateway's tables, `injections`, `chat_state`, `mcp_calls` (memory tool calls) and
`turn_memory` (the memory of each typed message, for its tool loop: `loop_memory.py`):
named migrations (`gateway:<name>`), in order, that the runtime applies to the store's file
(`BeliefStore.ensure_schema`) when it starts."""

from __future__ import annotations

from beliefs.store.migrations import Migration

GATEWAY = Migration(
    "gateway",
    "injections_and_chat_state",
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

MCP_CALLS = Migration(
    "gateway",
    "mcp_calls",  # memory tools: one row per MCP tool call (who, what, result)
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

TURN_MEMORY = Migration(
    "gateway",
    "turn_memory",  # the memory placed for each typed message, reused by its tool loop
    (
        """
        CREATE TABLE turn_memory (
            key VARCHAR PRIMARY KEY,
            created_at TIMESTAMPTZ NOT NULL,
            system_block VARCHAR NOT NULL,
            user_block VARCHAR NOT NULL,
            layers JSON NOT NULL,
            persona BOOLEAN NOT NULL,
            query VARCHAR NOT NULL
        )
        """,
        "CREATE INDEX turn_memory_time ON turn_memory (created_at)",
    ),
)

# The persona a request received is recorded as one reference (its version and how many
# beliefs it stands for) instead of the ids of every belief it summarises.
PERSONA_REF = Migration(
    "gateway",
    "add_persona_reference",
    (
        "ALTER TABLE injections ADD COLUMN persona_version VARCHAR",
        "ALTER TABLE injections ADD COLUMN persona_carries INTEGER",
        "ALTER TABLE turn_memory ADD COLUMN persona_version VARCHAR",
        "ALTER TABLE turn_memory ADD COLUMN persona_carries INTEGER",
    ),
)

MIGRATIONS: list[Migration] = [GATEWAY, MCP_CALLS, TURN_MEMORY, PERSONA_REF]
