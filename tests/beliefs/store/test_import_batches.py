"""Imports checked and written a batch at a time: the checks see across batches and the store,
and a refusal in a late batch undoes the early ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from beliefs.model.errors import ImportRejected
from beliefs.model.models import Belief
from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore
from beliefs.store.interchange import iter_file, to_jsonl
from tests.beliefs.factory import belief


def stored_ids(store: BeliefStore) -> list[str]:
    rows = store.list(include_deleted=True, include_superseded=True)
    return sorted(b.id for b in rows)


def superseded(bid: str, name: str, by: str) -> Belief:
    return belief(bid, name, superseded_by=by, epistemic_status="superseded")


def test_links_and_names_are_checked_across_batches(store: BeliefStore) -> None:
    # `old` points forward to an entry two batches on, and reuses its name (it is not live)
    entries = [
        superseded("old", "deploys", "new"),
        belief("x1", "x1"),
        belief("x2", "x2"),
        belief("x3", "x3"),
        belief("new", "deploys"),
    ]
    assert store.import_beliefs(entries, batch=2) == 5
    assert stored_ids(store) == ["new", "old", "x1", "x2", "x3"]
    assert store.verify() == []


@pytest.mark.parametrize(
    ("late", "message"),
    [
        (belief("a", "again"), r"entry 4 \(id a\): id: duplicates entry 0"),
        (belief("z", "alpha"), r"entry 4 \(id z\): canonical_name: 'alpha' .* live belief a"),
        (superseded("z", "zed", "ghost"), r"entry 4 \(id z\): superseded_by: points to ghost"),
        (belief("kept", "other"), r"entry 4 \(id kept\): id: already in the store"),
        (belief("z", "kept_name"), r"canonical_name: 'kept_name' .* live belief kept"),
    ],
)
def test_a_late_refusal_undoes_the_batches_written_before_it(
    store: BeliefStore, late: Belief, message: str
) -> None:
    store.create(belief("kept", "kept_name"))
    entries = [belief("a", "alpha"), belief("b", "beta"), belief("c", "gamma"), belief("d", "d")]
    with pytest.raises(ImportRejected, match=message):
        store.import_beliefs([*entries, late], batch=2)
    assert stored_ids(store) == ["kept"]
    assert store.import_beliefs(entries, batch=2) == 4  # nothing of the refused import is left


def test_chains_joining_the_store_are_checked_whole(store: BeliefStore) -> None:
    store.create(belief("head", "head"))
    merge = [belief("pad", "pad"), superseded("tail", "tail", "head"), belief("t2", "t2")]
    assert store.import_beliefs(merge, batch=1) == 3  # onto a stored head: one chain, one head
    ring = [superseded("p", "p", "q"), belief("pad2", "pad2"), superseded("q", "q", "p")]
    with pytest.raises(ImportRejected, match=r"entry 0 \(id p\): superseded_by: cycle p -> q"):
        store.import_beliefs(ring, batch=1)
    assert stored_ids(store) == ["head", "pad", "t2", "tail"]
    assert store.verify() == []


def test_a_file_is_read_an_entry_at_a_time(tmp_path: Path, store: BeliefStore) -> None:
    path = tmp_path / "beliefs.jsonl"
    good = [belief(f"b{i}", f"name_{i}") for i in range(5)]
    path.write_text("\n".join([*to_jsonl(good), "{not json"]) + "\n", encoding="utf-8")
    entries = iter_file(path)
    assert next(entries) == good[0]  # given before the broken last line is read
    with pytest.raises(ImportRejected, match="line 6 is not valid JSON"):
        store.import_beliefs(iter_file(path), batch=2)
    assert stored_ids(store) == []
    path.write_text("\n".join(to_jsonl(good)) + "\n", encoding="utf-8")
    assert store.import_beliefs(iter_file(path), batch=2) == 5
    assert [store.get(b.id) for b in good] == good


def test_a_store_opened_without_its_index_imports_without_holding_the_rows(
    db_path: Path,
) -> None:
    # DuckDB only: a PostgreSQL replica always holds its beliefs (it follows the others')
    entries = [belief(f"b{i}", f"name_{i}") for i in range(5)]
    with open_store(db_path, background=True) as store:
        assert store.import_beliefs(entries, batch=2) == 5
        assert list(store.index.beliefs("u1")) == []  # nothing read into memory
    with open_store(db_path) as store:
        assert sorted(b.id for b in store.index.beliefs("u1")) == [b.id for b in entries]
        assert stored_ids(store) == [b.id for b in entries]
