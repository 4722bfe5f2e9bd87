"""What the extraction workers are told by the gateway: one frozen object, built from settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from extractor.structured import CallOptions
from extractor.turn import Turn


@dataclass(frozen=True)
class ExtractionConfig:
    """The workers' knobs; the defaults are the settings' defaults."""

    model: str | None = None  # None: each turn's own model, where the gateway sent it
    # A gateway model name -> the LiteLLM model string it is served through.
    routes: Mapping[str, str] = field(default_factory=dict)
    workers: int = 1
    max_attempts: int = 4
    backoff_s: float = 5.0
    backoff_max_s: float = 600.0
    breaker_threshold: int = 3
    breaker_cooldown_s: float = 300.0
    call: CallOptions = field(default_factory=CallOptions)
    raw_output_chars: int = 16_000  # what a job keeps of the model's reply
    canary: bool = True  # ask each model a turn with a known answer before its first job
    batch_turns: int = 1  # with a backlog, pending turns of one conversation in one call
    batch_chars: int = 16_000  # the most turn text one batched call carries
    always_write_confirm: bool = False  # no belief made always-on without the user

    def model_for(self, turn: Turn) -> str:
        """The configured model, else the turn's own model where the gateway sent it: its
        LiteLLM route if it has one, else the Anthropic or the OpenAI-compatible upstream."""
        if self.model:
            return self.model
        route = self.routes.get(turn.model)
        if route is not None:
            return route
        return f"{'anthropic' if turn.wire == 'anthropic' else 'openai'}/{turn.model}"
