"""Batches of pending turns: with a backlog, turns of one conversation share one model call."""

from __future__ import annotations

import json
from collections.abc import Sequence

from extractor.config import ExtractionConfig
from extractor.jobs import Job
from extractor.turn import Turn

BATCHED = "extracted in one call"


def conversation_key(turn: Turn, config: ExtractionConfig) -> tuple[str, ...]:
    """What makes two turns one conversation: the same user, agent, scopes, wire and model."""
    # A turn carries no session id; the scopes name the project or thread it was said in.
    return (
        turn.user_id,
        turn.agent_id or "",
        *sorted(turn.scopes),
        turn.wire,
        config.model_for(turn),
    )


def turn_chars(turn: Turn) -> int:
    """The size of the turn's text in the prompt (before clipping)."""
    calls = len(json.dumps(turn.tool_calls)) if turn.tool_calls else 0
    return len(turn.user_message) + len(turn.assistant_message) + calls


def conversation_batches(
    jobs: Sequence[Job], config: ExtractionConfig, limit: int, *, turns: int
) -> list[list[Job]]:
    """The jobs (oldest first) grouped by conversation, each group capped at `turns` turns and
    `batch_chars` characters; the `limit` batches holding the oldest jobs."""
    batches: list[list[Job]] = []
    open_batch: dict[tuple[str, ...], tuple[list[Job], int]] = {}
    for job in jobs:
        key = conversation_key(job.turn, config)
        size = turn_chars(job.turn)
        batch, chars = open_batch.get(key, ([], 0))
        if not batch or len(batch) >= turns or chars + size > config.batch_chars:
            batch, chars = [], 0
            batches.append(batch)
        batch.append(job)
        open_batch[key] = (batch, chars + size)
    # Jobs enqueued together share a time: the turns' own times say which was said first.
    kept = batches[: max(0, limit)]
    for batch in kept:
        batch.sort(key=lambda job: (job.turn.created_at, job.created_at, job.id))
    return kept


def batch_note(lead_id: str, turns: int) -> str:
    """What a job answered in another job's call keeps as its reply."""
    return f"{BATCHED} of {turns} turns with job {lead_id}; its reply is kept there"
