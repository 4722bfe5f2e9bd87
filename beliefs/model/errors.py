"""Errors of the belief store; each carries an HTTP status for the API layer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class BeliefError(Exception):
    """Base class: a message that names the bad value and says what to do."""

    status: int = 400

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field  # the request field at fault, when there is one


class NotFound(BeliefError):
    """What the request names does not exist."""

    status = 404


class Conflicting(BeliefError):
    """The request clashes with what is stored, or with the state it is in."""

    status = 409


class Invalid(BeliefError):
    """The request's values are not acceptable."""

    status = 400


class BeliefNotFound(NotFound):
    """No belief has that id."""


class CanonicalNameClash(Conflicting):
    """A live belief of the user already has that name."""


class InvalidBelief(Invalid):
    """The belief's fields are not acceptable."""


class ChainError(Conflicting):
    """A supersession that would break the chain invariants (cycles, two heads)."""


class ImportRejected(Invalid):
    """An import file with at least one bad entry: nothing was imported."""


class StoreLocked(BeliefError):
    """Another process holds the DuckDB write lock."""

    status = 423


def reason(error: Mapping[str, Any]) -> str:
    """A pydantic error's message, without the "Value error, " it puts before a validator's
    own words (ours already say what is wrong)."""
    return str(error["msg"]).removeprefix("Value error, ")
