"""Every name a package lists in `__all__` exists."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = ["beliefs", "proxy", "extractor", "compaction", "proxy.commands", "proxy.ui"]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_names_exist(name: str) -> None:
    module = importlib.import_module(name)
    for exported in getattr(module, "__all__", []):
        assert hasattr(module, exported), f"{name}.__all__ lists missing {exported}"


def test_beliefs_exports_the_store_api() -> None:
    import beliefs

    assert {"BeliefStore", "StoreThread", "Persona", "StoreLocked"} <= set(beliefs.__all__)


def test_beliefs_exports_retrieval_and_rendering() -> None:
    import beliefs

    assert {"assemble", "ContextRequest", "search", "strip_injected"} <= set(beliefs.__all__)
