"""A real store in a temp dir, a scripted model, and a helper that runs compaction on it."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from beliefs.model.models import Belief
from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from compaction.model import ChatModel
from compaction.persona_keeper import PersonaKeeper
from compaction.runner import CompactionConfig, Compactor
from compaction.runs import RunReport

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

USER = "alice"
MODEL = "test-model"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "tenure.duckdb"


@pytest.fixture
def store(db_path: Path) -> Iterator[BeliefStore]:
    opened = open_store(db_path)
    yield opened
    opened.close()


def belief(name: str, content: str, **fields: Any) -> Belief:
    values: dict[str, Any] = {
        "user_id": USER,
        "canonical_name": name,
        "content": content,
        "why_it_matters": f"Keep {name} in mind.",
        "scope": ["domain:code"],
        "source_type": "extracted",
        "review_state": "pending",
    }
    values.update(fields)
    return Belief(**values)


def compact(
    store: BeliefStore,
    llm: ChatModel | None = None,
    *,
    model: str | None = MODEL,
    grace_hours: float = 24.0,
    **kwargs: Any,
) -> RunReport:
    """One compaction run on `store` through a store thread, as the CLI does it."""

    async def go() -> RunReport:
        thread = StoreThread(store)
        try:
            keeper = PersonaKeeper(thread, llm=llm, model=model)
            config = CompactionConfig(
                grace=timedelta(hours=grace_hours), cooldown_s=0, model=model if llm else None
            )
            compactor = Compactor(thread, llm=llm, config=config, persona=keeper)
            return await compactor.run(**kwargs)
        finally:
            close = getattr(llm, "aclose", None)
            if close is not None:
                await close()
            thread.close()

    return asyncio.run(go())


def review(**kwargs: Any) -> dict[str, Any]:
    """A cluster review reply with empty lists for whatever is not given."""
    out: dict[str, Any] = {"merges": [], "contradictions": [], "aliases": []}
    out.update(kwargs)
    return out


def state(store: BeliefStore) -> list[tuple[str, str, str, str | None]]:
    """Every row's id, name, status and link: equal before and after means nothing changed."""
    return [
        (b.id, b.canonical_name, b.epistemic_status, b.superseded_by)
        for b in store.list(include_superseded=True, include_deleted=True)
    ]
