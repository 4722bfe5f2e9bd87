"""Filling the index on open: rows decoded without validation, in the background if asked."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from beliefs.index import fuzzy_keys
from beliefs.index.belief_index import BeliefIndex
from beliefs.index.fuzzy_keys import PACK_MIN
from beliefs.index.postings import members
from beliefs.model.record import BeliefRecord
from beliefs.opening import open_store
from beliefs.search.matcher import search
from beliefs.store.belief_store import BeliefStore
from beliefs.store.rows import SELECT_BELIEFS, belief_from_row, record_from_row
from beliefs.text.query import parse_query
from bench.corpus import make_corpus
from tests.beliefs.factory import T0, belief


def _seeded(path: Path) -> list[str]:
    corpus = make_corpus(300, user_id="u1")
    extra = [
        belief(
            "b-prov",
            "with_provenance",
            ["prov"],
            provenance={"turn": "t-1", "n": 2},
            expires_at=T0,
            agent_id="coder",
            memory_class="episodic",
        ),
        belief("b-gone", "soon_deleted", ["gone"]),
    ]
    with open_store(path) as store:
        store.import_beliefs([*corpus, *extra])
        store.soft_delete("b-gone")
    return [b.id for b in corpus] + ["b-prov"]


def test_trusted_rows_decode_as_validated_ones(tmp_path: Path) -> None:
    _seeded(tmp_path / "t.duckdb")
    with open_store(tmp_path / "t.duckdb") as store:
        rows = store.execute(SELECT_BELIEFS).fetchall()
    assert len(rows) == 302
    for row in rows:
        record = record_from_row(row)
        assert record.to_belief() == belief_from_row(row)
        assert record == BeliefRecord.of(belief_from_row(row))


def test_a_background_load_fills_the_same_index_and_readers_wait_for_it(tmp_path: Path) -> None:
    live = _seeded(tmp_path / "t.duckdb")
    with open_store(tmp_path / "t.duckdb") as store:
        expected = {b.id: b for b in store.index.beliefs("u1")}
    with open_store(tmp_path / "t.duckdb", background=True) as store:
        assert store.load_pending and not store.index.ready.is_set()
        store.load_in_background()
        assert not store.load_pending
        # A read right after the start waits for the loader instead of seeing a partial index.
        assert store.get("b-prov").provenance == {"turn": "t-1", "n": 2}
        assert store.index.ready.is_set()
        assert {b.id: b for b in store.index.beliefs("u1")} == expected
        assert sorted(expected) == sorted(live)
        assert store.get("b-gone").deleted_at is not None  # soft-deleted rows still readable
        assert store.index.failed is None


@pytest.mark.parametrize("pack_min", [0, PACK_MIN])  # packed, and kept in a dict (too few)
def test_a_loaded_index_finds_aliases_one_edit_away_before_and_after_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pack_min: int
) -> None:
    monkeypatch.setattr(fuzzy_keys, "PACK_MIN", pack_min)  # the size from which keys pack
    _seeded(tmp_path / "t.duckdb")
    with open_store(tmp_path / "t.duckdb") as store:
        store.create(belief("b-kafka", "event_bus", ["kafkaesque"]))

    def fuzzy(store: BeliefStore, query: str) -> list[str]:
        terms = parse_query(query)
        return [h.belief.id for h in search(store.index, "u1", terms, lambda b: True)]

    with open_store(tmp_path / "t.duckdb") as store:  # packed while loading
        assert (store.index.user("u1").deletes.packed > 0) == (pack_min == 0)
        assert fuzzy(store, "the kafkaesqe consumer") == ["b-kafka"]
        store.create(belief("b-zoo", "keeper", ["zookeepers"]))
        assert fuzzy(store, "zookeeprs") == ["b-zoo"]
        store.update("b-kafka", {"aliases": ["eventbus"]})
        assert fuzzy(store, "the kafkaesqe consumer") == []
        fresh = BeliefIndex()
        fresh.load(sorted(store.index.beliefs("u1"), key=lambda b: b.id))
        for_each = (store.index.user("u1").deletes, fresh.user("u1").deletes)
        loaded, built = ({k: frozenset(members(v)) for k, v in d.items()} for d in for_each)
        assert loaded == built


def test_loaded_beliefs_keep_their_times_packed(tmp_path: Path) -> None:
    same = [belief(f"b-{i}", f"name_{i}", [f"alias {i}"]) for i in range(3)]
    later = belief("b-later", "later_name", ["later"], updated_at=T0.replace(hour=5))
    with open_store(tmp_path / "t.duckdb") as store:
        store.import_beliefs([*same, later])
    with open_store(tmp_path / "t.duckdb") as store:
        records = {bid: store.index.record(bid) for bid in ("b-0", "b-1", "b-2", "b-later")}
    held = [r for r in records.values() if r is not None]
    assert len(held) == 4 and all(r.created_at == T0 for r in held)
    assert [r.updated_at.hour for r in held] == [T0.hour, T0.hour, T0.hour, 5]
    # a record's three times are one number, no bigger than one datetime object; times that
    # are all one (a belief never changed) are a small one
    assert all(sys.getsizeof(r._times) <= sys.getsizeof(T0) for r in held)
    assert sys.getsizeof(held[0]._times) < sys.getsizeof(T0)
