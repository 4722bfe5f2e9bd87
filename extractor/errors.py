"""Errors of the extractor; they share the store's base so the API renders them the same way."""

from __future__ import annotations

from beliefs.model.errors import BeliefError, Conflicting, Invalid, NotFound


class ExtractorError(BeliefError):
    """Base class of the extractor's errors."""


class ExtractionOutputInvalid(ExtractorError):
    """The model's reply did not validate, even after one repair and one re-ask."""

    status = 502

    def __init__(self, message: str, *, raw_output: str) -> None:
        super().__init__(message)
        self.raw_output = raw_output


class ExtractionTruncated(ExtractionOutputInvalid):
    """The reply was cut off at the token budget, also after one retry with a larger one."""


class ModelRefused(ExtractorError):
    """The model server answered with an error status that may refuse the request's form.

    When its words name the output mode or the schema, the caller takes it as a configuration
    fact about that model (another mode is tried; no breaker trip); otherwise it is an outage.
    """

    status = 502

    def __init__(self, message: str, *, status_code: int | None, detail: str) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.detail = detail


class ModelSilent(ExtractorError):
    """The model server sent nothing for longer than the silence limit; what arrived is kept.

    A slow model is a configuration fact, not an outage: it never counts toward the breaker.
    """

    status = 504

    def __init__(self, message: str, *, raw_output: str) -> None:
        super().__init__(message)
        self.raw_output = raw_output


class ModelUnreachable(ExtractorError):
    """Nothing listens at the model server's URL (an outage: it counts toward the breaker)."""

    status = 502


class ModelMisconfigured(ExtractorError):
    """The model's server cannot take extraction calls as it is set up: reported as such, with
    what to change (no retries, no breaker trip)."""

    status = 502


class OutputModeUnavailable(ModelMisconfigured):
    """Every structured-output mode the settings allow was refused by the model."""


class ModelUnauthorized(ModelMisconfigured):
    """The model server rejected the call's key (401/403): a missing or wrong key, no outage."""


class ContextWindowTooSmall(ModelMisconfigured):
    """The server's context window cannot hold the extraction prompt and the reply budget."""


class JobNotFound(ExtractorError, NotFound):
    """No extraction job has that id."""


class JobStateError(ExtractorError, Conflicting):
    """The job is not in a state that allows the operation (e.g. retrying a finished job)."""


class ConflictNotFound(ExtractorError, NotFound):
    """No conflict has that id."""


class ConflictStateError(ExtractorError, Conflicting):
    """The conflict is not in a state that allows the operation (e.g. resolving it twice)."""


class InvalidResolution(ExtractorError, Invalid):
    """A resolution or status outside the accepted ones."""
