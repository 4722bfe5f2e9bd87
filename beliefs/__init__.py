"""Beliefs: the model, the DuckDB store, the alias search index and context assembly."""

from beliefs.context import Context, ContextRequest, assemble
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
from beliefs.render import append_block, strip_injected, system_block, user_block
from beliefs.search import Clause, Hit, search
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
    "Clause",
    "Context",
    "ContextRequest",
    "HistoryEvent",
    "Hit",
    "ImportRejected",
    "InvalidBelief",
    "Persona",
    "StoreLocked",
    "StoreThread",
    "append_block",
    "assemble",
    "search",
    "strip_injected",
    "system_block",
    "user_block",
]
