"""CLI command groups: each module exposes `register(subparsers)` and sets a `handler`.

A handler is `handler(args: argparse.Namespace, settings: Settings) -> int` (the exit code);
it raises `BeliefError` or `SettingsError` for anything the user must fix.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from proxy.settings import Settings

Handler = Callable[[argparse.Namespace, Settings], int]

__all__ = ["Handler"]
