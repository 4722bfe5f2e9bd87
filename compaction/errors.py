"""Errors of compaction; they share the store's base so the API renders them the same way."""

from __future__ import annotations

from beliefs.model.errors import BeliefError


class CompactionError(BeliefError):
    """Base class of compaction's errors."""


class CompactionBusy(CompactionError):
    """A run is already in progress (runs never overlap)."""

    status = 409


class ModelAnswerInvalid(CompactionError):
    """The model's reply did not validate, even after one re-ask; nothing was changed."""

    status = 502

    def __init__(self, message: str, *, raw_output: str) -> None:
        super().__init__(message)
        self.raw_output = raw_output
