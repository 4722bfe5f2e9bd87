"""Errors of the belief store; each carries an HTTP status for the API layer."""

from __future__ import annotations


class BeliefError(Exception):
    """Base class: a message that names the bad value and says what to do."""

    status: int = 400

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field  # the request field at fault, when there is one


class BeliefNotFound(BeliefError):
    status = 404


class CanonicalNameClash(BeliefError):
    status = 409


class InvalidBelief(BeliefError):
    status = 400


class ChainError(BeliefError):
    """A supersession that would break the chain invariants (cycles, two heads)."""

    status = 409


class ImportRejected(BeliefError):
    """An import file with at least one bad entry: nothing was imported."""

    status = 400


class StoreLocked(BeliefError):
    """Another process holds the DuckDB write lock."""

    status = 423
