"""Where `tenure serve`'s log lines go."""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from proxy.cli.logs import configure_logging
from proxy.settings import Settings


@pytest.fixture
def kept_logging() -> Iterator[None]:
    """The root logger's handlers and level as they were, after the test."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_lines_go_to_the_standard_error_of_the_moment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept_logging: None
) -> None:
    first, second = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    configure_logging(Settings(home=tmp_path))
    logging.getLogger("tenure.test").info("one")
    assert first.getvalue().rstrip().endswith("one")
    # a host swaps its standard error and closes the old one (a test runner between tests)
    monkeypatch.setattr(sys, "stderr", second)
    first.close()
    logging.getLogger("tenure.test").info("two")
    # a line written to a closed stream would be reported as a "Logging error" instead
    assert "Logging error" not in second.getvalue()
    assert second.getvalue().rstrip().endswith("two")
