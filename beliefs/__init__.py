"""Beliefs: the model, the DuckDB store, the alias search index and context assembly."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from beliefs.compiled import check
from beliefs.exports import lazy_exports

check(Path(__file__).parent)  # a compiled module older than its source would run, not the source

if TYPE_CHECKING:
    from beliefs.context.assembly import ContextRequest, assemble  # noqa: I001
    from beliefs.context.layers import Context
    from beliefs.model.errors import BeliefError, BeliefNotFound, CanonicalNameClash, ChainError
    from beliefs.model.errors import ImportRejected, InvalidBelief, StoreLocked
    from beliefs.index.belief_index import BeliefIndex
    from beliefs.model.models import Belief, HistoryEvent
    from beliefs.model.persona import Persona
    from beliefs.opening import open_store
    from beliefs.context.render import append_block, strip_injected, system_block, user_block
    from beliefs.search.matcher import Clause, Hit, search
    from beliefs.store.belief_store import BeliefStore
    from beliefs.store.thread import StoreThread

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
    "open_store",
    "search",
    "strip_injected",
    "system_block",
    "user_block",
]

# Imported on first use: `tenure beliefs list` needs the store, not retrieval or the models.
__getattr__ = lazy_exports(
    __name__,
    {
        "Context": "beliefs.context.layers",
        "ContextRequest": "beliefs.context.assembly",
        "assemble": "beliefs.context.assembly",
        "BeliefError": "beliefs.model.errors",
        "BeliefNotFound": "beliefs.model.errors",
        "CanonicalNameClash": "beliefs.model.errors",
        "ChainError": "beliefs.model.errors",
        "ImportRejected": "beliefs.model.errors",
        "InvalidBelief": "beliefs.model.errors",
        "StoreLocked": "beliefs.model.errors",
        "BeliefIndex": "beliefs.index.belief_index",
        "Belief": "beliefs.model.models",
        "HistoryEvent": "beliefs.model.models",
        "Persona": "beliefs.model.persona",
        "open_store": "beliefs.opening",
        "append_block": "beliefs.context.render",
        "strip_injected": "beliefs.context.render",
        "system_block": "beliefs.context.render",
        "user_block": "beliefs.context.render",
        "Clause": "beliefs.search.matcher",
        "Hit": "beliefs.search.matcher",
        "search": "beliefs.search.matcher",
        "BeliefStore": "beliefs.store.belief_store",
        "StoreThread": "beliefs.store.thread",
    },
)
