"""Extraction: turns become beliefs through a durable job queue, an LLM call and a merge policy."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beliefs.exports import lazy_exports

if TYPE_CHECKING:
    from extractor.breaker import CircuitBreaker
    from extractor.config import ExtractionConfig
    from extractor.conflicts import Conflict, ConflictBook
    from extractor.errors import (
        ConflictNotFound,
        ConflictStateError,
        ExtractionOutputInvalid,
        ExtractionTruncated,
        ExtractorError,
        InvalidResolution,
        JobNotFound,
        JobStateError,
        ModelMisconfigured,
    )
    from extractor.jobs import Job, JobQueue
    from extractor.llm import ChatModel, LiteLLMChatModel, ModelCall, ModelReply
    from extractor.merge import plan_merge
    from extractor.modes import ModeBook
    from extractor.plan import Plan
    from extractor.prompts import build_messages
    from extractor.redact import redact
    from extractor.schema import ExtractionOutput
    from extractor.structured import CallOptions, complete_structured
    from extractor.turn import Turn
    from extractor.worker import ExtractionWorkers

__all__ = [
    "CallOptions",
    "ChatModel",
    "CircuitBreaker",
    "Conflict",
    "ConflictBook",
    "ConflictNotFound",
    "ConflictStateError",
    "ExtractionConfig",
    "ExtractionOutput",
    "ExtractionOutputInvalid",
    "ExtractionTruncated",
    "ExtractionWorkers",
    "ExtractorError",
    "InvalidResolution",
    "Job",
    "JobNotFound",
    "JobQueue",
    "JobStateError",
    "LiteLLMChatModel",
    "ModeBook",
    "ModelCall",
    "ModelMisconfigured",
    "ModelReply",
    "Plan",
    "Turn",
    "build_messages",
    "complete_structured",
    "plan_merge",
    "redact",
]

# Imported on first use: `tenure beliefs list` needs the store, not retrieval or the models.
__getattr__ = lazy_exports(
    __name__,
    {
        "CircuitBreaker": "extractor.breaker",
        "ExtractionConfig": "extractor.config",
        "Conflict": "extractor.conflicts",
        "ConflictBook": "extractor.conflicts",
        "ConflictNotFound": "extractor.errors",
        "ConflictStateError": "extractor.errors",
        "ExtractionOutputInvalid": "extractor.errors",
        "ExtractionTruncated": "extractor.errors",
        "ExtractorError": "extractor.errors",
        "InvalidResolution": "extractor.errors",
        "JobNotFound": "extractor.errors",
        "JobStateError": "extractor.errors",
        "ModelMisconfigured": "extractor.errors",
        "Job": "extractor.jobs",
        "JobQueue": "extractor.jobs",
        "ChatModel": "extractor.llm",
        "LiteLLMChatModel": "extractor.llm",
        "ModelCall": "extractor.llm",
        "ModelReply": "extractor.llm",
        "plan_merge": "extractor.merge",
        "ModeBook": "extractor.modes",
        "Plan": "extractor.plan",
        "build_messages": "extractor.prompts",
        "redact": "extractor.redact",
        "ExtractionOutput": "extractor.schema",
        "CallOptions": "extractor.structured",
        "complete_structured": "extractor.structured",
        "Turn": "extractor.turn",
        "ExtractionWorkers": "extractor.worker",
    },
)
