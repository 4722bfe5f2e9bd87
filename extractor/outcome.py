"""What one extraction call ended with: the report it costs and the outcome the worker lands."""

from __future__ import annotations

from dataclasses import dataclass

from extractor.errors import ExtractorError
from extractor.jobs import Job
from extractor.redact import redact
from extractor.schema import ExtractionOutput


@dataclass(frozen=True)
class JobReport:
    """What one extraction call cost and how it ended (for the evaluation harness)."""

    job_id: str
    model: str
    seconds: float
    mode: str | None
    calls: int
    prompt_tokens: int
    completion_tokens: int
    error: str
    cached_tokens: int = 0


@dataclass(frozen=True)
class Outcome:
    """What one extraction call produced: an output to land, or an error to record."""

    job: Job
    model: str
    output: ExtractionOutput | None = None
    raw_output: str | None = None
    error: str = ""
    permanent: bool = False  # unusable output: park the job now instead of retrying
    report: JobReport | None = None
    riders: tuple[Job, ...] = ()  # older turns answered in the same call: done with this job


def named(exc: ExtractorError) -> str:
    """The error's type and message, redacted and bounded, as a job keeps it."""
    return redact(f"{type(exc).__name__}: {exc.message}")[:2000]


def bounded(text: str, limit: int) -> str:
    """The text up to `limit` characters, saying how much more there was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters not kept]"


def describe(exc: BaseException) -> str:
    """Any exception as a job's error text, redacted and bounded."""
    text = str(exc) or "no detail"
    if isinstance(exc, TimeoutError):
        text = "the extraction model did not answer in time"
    return redact(f"{type(exc).__name__}: {text}")[:2000]
