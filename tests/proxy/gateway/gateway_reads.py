"""Reading a test gateway's effects over its API: queued extraction turns, injection records,
and a corpus of unrelated beliefs (BM25 needs one: in a store of a single belief no term is
rare enough to pass the minimum score)."""

from __future__ import annotations

from typing import Any

import httpx

from beliefs.model.models import Belief
from tests.proxy.conftest import Gateway


def pending_turns(gw: Gateway) -> list[dict[str, Any]]:
    """The turns of the jobs waiting for extraction, oldest first."""
    jobs = httpx.get(gw.url + "/api/jobs", params={"status": "pending"}, timeout=10).json()
    return [job["turn"] for job in sorted(jobs, key=lambda j: j["created_at"])]


def injections(gw: Gateway) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = httpx.get(gw.url + "/api/injections", timeout=10).json()
    return records


def corpus(user_id: str) -> list[Belief]:
    return [
        Belief(
            user_id=user_id, canonical_name=f"other_topic_{n}", content="x", scope=["domain:misc"]
        )
        for n in range(8)
    ]
