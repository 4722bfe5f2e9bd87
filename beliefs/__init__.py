"""Beliefs: the model, the DuckDB store, the alias search index and context assembly."""

from beliefs.errors import (
    BeliefError,
    BeliefNotFound,
    CanonicalNameClash,
    ChainError,
    ImportRejected,
    InvalidBelief,
    StoreLocked,
)
from beliefs.index import BeliefIndex
from beliefs.models import Belief, HistoryEvent
from beliefs.persona import Persona
from beliefs.store import BeliefStore
from beliefs.thread import StoreThread

__all__ = [
    "Belief",
    "BeliefError",
    "BeliefIndex",
    "BeliefNotFound",
    "BeliefStore",
    "CanonicalNameClash",
    "ChainError",
    "HistoryEvent",
    "ImportRejected",
    "InvalidBelief",
    "Persona",
    "StoreLocked",
    "StoreThread",
]
