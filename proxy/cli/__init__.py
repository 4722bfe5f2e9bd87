"""CLI command groups: each module exposes `register(subparsers)` and sets a `handler`.

A handler is `handler(args: argparse.Namespace, settings: Settings) -> int` (the exit code);
it raises `BeliefError` or `SettingsError` for anything the user must fix.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from proxy.settings import Settings

Handler = Callable[[argparse.Namespace, Settings], int]

__all__ = ["Handler", "count"]


def count(low: int = 1, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` (to `high`), refused with a clear message."""

    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{raw!r} is not a whole number") from None
        if value < low or (high is not None and value > high):
            upper = f" to {high}" if high is not None else " or more"
            raise argparse.ArgumentTypeError(f"{value} is out of range; use {low}{upper}")
        return value

    return parse
