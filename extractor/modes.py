"""Structured-output modes and what each model is known to refuse, learned once per process.

Servers differ: hosted providers take a strict `json_schema`; llama.cpp-based servers take
`json_object` (or a schema they turn into a grammar, within limits); some take neither but call
tools; a plain completion endpoint takes none. A refusal is a fact about the model's server,
remembered here and shown on `/status`; it is never counted as an outage.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

log = logging.getLogger("tenure.extractor")

OutputMode = Literal["json_schema", "json_object", "tools", "text"]
OUTPUT_MODES: tuple[OutputMode, ...] = get_args(OutputMode)
# The setting: a fixed mode, or "auto" (the first the model accepts, in the order above).
ModeSetting = Literal["auto", "json_schema", "json_object", "tools", "text"]
RulesPlacement = Literal["auto", "system", "user"]


@dataclass
class _Facts:
    refused: dict[OutputMode, str] = field(default_factory=dict)
    bare_schema: str | None = None  # why the schema's length and count limits are left out
    system_dropped: str | None = None  # how we know the chat template drops system messages
    last_mode: OutputMode | None = None
    silent: str | None = None  # the last reply abandoned for silence, with the setting to raise
    fit: bool | None = None  # the canary's verdict; None until it was asked
    fitness: str | None = None  # why


class ModeBook:
    """Per model: refused modes (with the server's words), and how its template behaves.

    Thread-safe; one book lives on the shared model client, so extraction and compaction learn
    from each other's calls.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._facts: dict[str, _Facts] = {}

    def modes_for(self, model: str, setting: ModeSetting) -> list[OutputMode]:
        """The modes to try, best first: the fixed one, or every mode not yet refused."""
        with self._lock:
            refused = self._facts.get(model, _Facts()).refused
        if setting != "auto":
            return [] if setting in refused else [setting]
        return [mode for mode in OUTPUT_MODES if mode not in refused]

    def refuse(self, model: str, mode: OutputMode, reason: str) -> None:
        """Remember that `model` refuses `mode`; logged the first time only."""
        with self._lock:
            facts = self._facts.setdefault(model, _Facts())
            first = mode not in facts.refused
            facts.refused[mode] = reason[:300]
        if first:
            log.warning(
                "model %s refuses output mode %s (%s); not asking again", model, mode, reason
            )

    def refusal(self, model: str, mode: OutputMode) -> str | None:
        with self._lock:
            return self._facts.get(model, _Facts()).refused.get(mode)

    def use_bare_schema(self, model: str, reason: str) -> None:
        with self._lock:
            facts = self._facts.setdefault(model, _Facts())
            first = facts.bare_schema is None
            facts.bare_schema = reason[:300]
        if first:
            log.warning(
                "model %s refuses the schema's limits (%s); sent without them", model, reason
            )

    def bare_schema(self, model: str) -> bool:
        with self._lock:
            return self._facts.get(model, _Facts()).bare_schema is not None

    def note_system_dropped(self, model: str, evidence: str) -> None:
        with self._lock:
            facts = self._facts.setdefault(model, _Facts())
            first = facts.system_dropped is None
            facts.system_dropped = evidence
        if first:
            log.warning(
                "model %s: its chat template drops system messages (%s); the rules now go in "
                "the user turn",
                model,
                evidence,
            )

    def system_dropped(self, model: str) -> bool:
        with self._lock:
            return self._facts.get(model, _Facts()).system_dropped is not None

    def note_silent(self, model: str, message: str) -> None:
        """A reply was abandoned for silence: a configuration fact (logged by the job)."""
        with self._lock:
            self._facts.setdefault(model, _Facts()).silent = message[:500]

    def note_fitness(self, model: str, fit: bool, reason: str) -> None:
        """Record the canary's verdict; an unfit model is logged with the reason."""
        with self._lock:
            facts = self._facts.setdefault(model, _Facts())
            facts.fit, facts.fitness = fit, reason
        if not fit:
            log.warning(
                "model %s is unfit for extraction: %s; its jobs that write nothing are marked "
                "suspect (choose an instruction-tuned model: docs/extraction-models.md)",
                model,
                reason,
            )

    def unfit(self, model: str) -> str | None:
        """Why the model failed the canary, or None (fit, or not asked yet)."""
        with self._lock:
            facts = self._facts.get(model, _Facts())
            return facts.fitness if facts.fit is False else None

    def note_used(self, model: str, mode: OutputMode) -> None:
        with self._lock:
            self._facts.setdefault(model, _Facts()).last_mode = mode

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """For `/healthz` and `/status`: per model, the mode in use and every fact learned."""
        with self._lock:
            return {
                model: {
                    "mode": facts.last_mode,
                    "refused_modes": dict(facts.refused),
                    "schema_limits_refused": facts.bare_schema,
                    "system_messages_dropped": facts.system_dropped,
                    "fell_silent": facts.silent,
                    "fit": facts.fit,
                    "fitness": facts.fitness,
                }
                for model, facts in sorted(self._facts.items())
            }
