"""Compaction: merge duplicates, flag contradictions, enrich aliases, expire, and the persona."""

from compaction.errors import CompactionBusy, CompactionError, ModelAnswerInvalid
from compaction.model import ChatModel
from compaction.persona import deterministic_text, inputs_hash, persona_inputs
from compaction.persona_keeper import PersonaKeeper
from compaction.runner import CompactionConfig, Compactor
from compaction.runs import RUN_COUNTS, RunReport, list_runs
from compaction.scheduler import CompactionScheduler

__all__ = [
    "RUN_COUNTS",
    "ChatModel",
    "CompactionBusy",
    "CompactionConfig",
    "CompactionError",
    "CompactionScheduler",
    "Compactor",
    "ModelAnswerInvalid",
    "PersonaKeeper",
    "RunReport",
    "deterministic_text",
    "inputs_hash",
    "list_runs",
    "persona_inputs",
]
