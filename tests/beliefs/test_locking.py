"""A database held by another process gives a clear StoreLocked, never a DuckDB traceback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from beliefs.errors import StoreLocked
from beliefs.store import BeliefStore


def test_second_writer_is_told_who_holds_the_file(
    db_path: Path, hold_database: Callable[[Path], int]
) -> None:
    BeliefStore.open(db_path).close()
    pid = hold_database(db_path)
    with pytest.raises(StoreLocked) as caught:
        BeliefStore.open(db_path)
    message = caught.value.message
    assert f"process {pid}" in message
    assert "stop it" in message and "--read-only" in message
    assert "IO Error" not in message
    assert caught.value.status == 423


def test_reader_is_told_too(db_path: Path, hold_database: Callable[[Path], int]) -> None:
    BeliefStore.open(db_path).close()
    pid = hold_database(db_path)
    with pytest.raises(StoreLocked, match=f"process {pid}"):
        BeliefStore.open(db_path, read_only=True)
