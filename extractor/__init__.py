"""Extraction: turns become beliefs through a durable job queue, an LLM call and a merge policy."""

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
