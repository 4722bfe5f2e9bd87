"""Building beliefs for tests with only the fields a test cares about."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from beliefs.index.belief_index import BeliefIndex
from beliefs.model.models import Belief

T0 = datetime(2026, 10, 1, tzinfo=UTC)


def belief(bid: str, name: str, aliases: list[str] | None = None, **fields: Any) -> Belief:
    values: dict[str, Any] = {
        "id": bid,
        "user_id": "u1",
        "canonical_name": name,
        "aliases": aliases or [],
        "content": f"content of {name}",
        "why_it_matters": f"Shape answers around {name}.",
        "scope": ["domain:code"],
        "created_at": T0,
        "updated_at": T0,
        "last_reinforced_at": T0,
    }
    values.update(fields)
    return Belief(**values)


def index_of(*beliefs: Belief, filler: int = 0) -> BeliefIndex:
    """An index of `beliefs` plus `filler` unrelated ones (so shared aliases keep their idf)."""
    index = BeliefIndex()
    index.load(beliefs)
    index.load(belief(f"filler-{i}", f"unrelated_{i}", [f"filler{i}"]) for i in range(filler))
    return index
