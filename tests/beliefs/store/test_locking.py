"""A database held by another process gives a clear StoreLocked, never a DuckDB traceback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from beliefs.model.errors import BeliefError, StoreLocked
from beliefs.opening import open_store


def test_second_writer_is_told_who_holds_the_file(
    db_path: Path, hold_database: Callable[[Path], int]
) -> None:
    open_store(db_path).close()
    pid = hold_database(db_path)
    with pytest.raises(StoreLocked) as caught:
        open_store(db_path)
    message = caught.value.message
    assert f"process {pid}" in message
    assert "stop it" in message and "--read-only" in message
    assert "IO Error" not in message
    assert caught.value.status == 423


def test_reader_is_told_too(db_path: Path, hold_database: Callable[[Path], int]) -> None:
    open_store(db_path).close()
    pid = hold_database(db_path)
    with pytest.raises(StoreLocked, match=f"process {pid}"):
        open_store(db_path, read_only=True)


def test_damaged_file_is_not_reported_as_a_lock(db_path: Path) -> None:
    """DuckDB's checksum message says "block"; that names no lock."""
    open_store(db_path).close()
    size = db_path.stat().st_size
    with db_path.open("r+b") as f:
        f.seek(3 * 4096)  # past DuckDB's headers, over the stored blocks
        f.write(bytes(range(256)) * ((size - 4 * 4096) // 256))
    with pytest.raises(BeliefError) as caught:
        open_store(db_path)
    assert not isinstance(caught.value, StoreLocked)
    assert "damaged" in caught.value.message and "tenure import" in caught.value.message
    assert "locked" not in caught.value.message
