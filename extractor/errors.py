"""Errors of the extractor; they share the store's base so the API renders them the same way."""

from __future__ import annotations

from beliefs.errors import BeliefError


class ExtractorError(BeliefError):
    """Base class of the extractor's errors."""


class ExtractionOutputInvalid(ExtractorError):
    """The model's reply did not validate, even after one repair and one re-ask."""

    status = 502

    def __init__(self, message: str, *, raw_output: str) -> None:
        super().__init__(message)
        self.raw_output = raw_output


class JobNotFound(ExtractorError):
    status = 404


class JobStateError(ExtractorError):
    """The job is not in a state that allows the operation (e.g. retrying a finished job)."""

    status = 409


class ConflictNotFound(ExtractorError):
    status = 404


class ConflictStateError(ExtractorError):
    status = 409


class InvalidResolution(ExtractorError):
    status = 400
