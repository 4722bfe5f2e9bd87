"""Compaction: merge duplicates, flag contradictions, enrich aliases, expire, and the persona."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beliefs.exports import lazy_exports

if TYPE_CHECKING:
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

# Imported on first use: `tenure beliefs list` needs the store, not retrieval or the models.
__getattr__ = lazy_exports(
    __name__,
    {
        "CompactionBusy": "compaction.errors",
        "CompactionError": "compaction.errors",
        "ModelAnswerInvalid": "compaction.errors",
        "ChatModel": "compaction.model",
        "deterministic_text": "compaction.persona",
        "inputs_hash": "compaction.persona",
        "persona_inputs": "compaction.persona",
        "PersonaKeeper": "compaction.persona_keeper",
        "CompactionConfig": "compaction.runner",
        "Compactor": "compaction.runner",
        "RUN_COUNTS": "compaction.runs",
        "RunReport": "compaction.runs",
        "list_runs": "compaction.runs",
        "CompactionScheduler": "compaction.scheduler",
    },
)
