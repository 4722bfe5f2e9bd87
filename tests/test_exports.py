"""Every name a package lists in `__all__` exists."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

PACKAGES = [
    "beliefs",
    "beliefs.documents",
    "proxy",
    "extractor",
    "compaction",
    "proxy.cli",
    "proxy.ui",
    "proxy.gateway",
    "proxy.api",
    "proxy.security",
    "proxy.mcp",
]


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


def test_extractor_exports_the_hand_off() -> None:
    import extractor

    assert {"Turn", "JobQueue", "ExtractionWorkers", "ChatModel"} <= set(extractor.__all__)


def test_importing_the_extractor_does_not_import_litellm() -> None:
    code = "import sys, extractor, proxy.app; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
