"""Beliefs: the model, the DuckDB store, the alias search index and context assembly."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beliefs.exports import lazy_exports

if TYPE_CHECKING:
    from beliefs.context import Context, ContextRequest, assemble  # noqa: I001
    from beliefs.errors import BeliefError, BeliefNotFound, CanonicalNameClash, ChainError
    from beliefs.errors import ImportRejected, InvalidBelief, StoreLocked
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

# Imported on first use: `tenure beliefs list` needs the store, not retrieval or the models.
__getattr__ = lazy_exports(
    __name__,
    {
        "Context": "beliefs.context",
        "ContextRequest": "beliefs.context",
        "assemble": "beliefs.context",
        "BeliefError": "beliefs.errors",
        "BeliefNotFound": "beliefs.errors",
        "CanonicalNameClash": "beliefs.errors",
        "ChainError": "beliefs.errors",
        "ImportRejected": "beliefs.errors",
        "InvalidBelief": "beliefs.errors",
        "StoreLocked": "beliefs.errors",
        "BeliefIndex": "beliefs.index",
        "Belief": "beliefs.models",
        "HistoryEvent": "beliefs.models",
        "Persona": "beliefs.persona",
        "append_block": "beliefs.render",
        "strip_injected": "beliefs.render",
        "system_block": "beliefs.render",
        "user_block": "beliefs.render",
        "Clause": "beliefs.search",
        "Hit": "beliefs.search",
        "search": "beliefs.search",
        "BeliefStore": "beliefs.store",
        "StoreThread": "beliefs.thread",
    },
)
