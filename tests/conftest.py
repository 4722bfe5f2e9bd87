"""Fixtures shared by every part's tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.fakes.upstream import FakeUpstream


@pytest.fixture(scope="session")
def upstream_server() -> Iterator[FakeUpstream]:
    with FakeUpstream() as server:
        yield server


@pytest.fixture
def upstream(upstream_server: FakeUpstream) -> Iterator[FakeUpstream]:
    """The stand-in provider with no recorded requests and no scripted replies."""
    upstream_server.reset()
    yield upstream_server
    upstream_server.reset()
