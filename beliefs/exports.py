"""A package's public names, each imported from its module on first use (PEP 562)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The package's `__getattr__`: `homes` maps each name to the module defining it, so a
    command that needs one name does not import every module of the package."""
    namespace = importlib.import_module(package).__dict__

    def get(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value  # once found, an ordinary attribute
        return value

    return get
