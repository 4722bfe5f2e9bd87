"""Beliefs: the model, the DuckDB store, the alias search index and context assembly."""

from beliefs.errors import BeliefError, BeliefNotFound, CanonicalNameClash
from beliefs.index import BeliefIndex
from beliefs.models import Belief, HistoryEvent

__all__ = [
    "Belief",
    "BeliefError",
    "BeliefIndex",
    "BeliefNotFound",
    "CanonicalNameClash",
    "HistoryEvent",
]
