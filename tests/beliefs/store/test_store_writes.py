"""Writes are checked against the store's memory and held until the commit: reads must not
notice either."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from beliefs.model.errors import CanonicalNameClash, InvalidBelief
from beliefs.model.models import Belief
from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore


def belief(name: str, **kw: Any) -> Belief:
    return Belief(user_id=kw.pop("user_id", "u"), canonical_name=name, **kw)


def read_back(store: BeliefStore, belief_id: str) -> Belief:
    """The row as the database holds it, with its history."""
    rows = store.list(include_superseded=True, include_deleted=True)
    [row] = [r for r in rows if r.id == belief_id]
    return row.model_copy(update={"change_log": store.history(belief_id)})


def test_every_write_returns_what_reading_it_back_gives(store: BeliefStore) -> None:
    def checked(result: Belief) -> Belief:
        assert result == read_back(store, result.id)
        return result

    plus2 = timezone(timedelta(hours=2))
    first = belief(
        "editor",
        aliases=["vim"],
        created_at=datetime(2026, 1, 2, 3, 4, 5, 6),  # naive: taken as UTC
        last_reinforced_at=datetime(2026, 1, 2, 5, 0, tzinfo=plus2),
        provenance={"z": 1, "a": {"when": datetime(2026, 1, 1, tzinfo=UTC)}},
    )
    created = checked(store.create(first))
    assert created.provenance == {"a": {"when": "2026-01-01 00:00:00+00:00"}, "z": 1}
    assert created.created_at == datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    checked(store.update(first.id, {"content": "neovim", "expires_at": datetime(2027, 1, 1)}))
    checked(store.reinforce(first.id, aliases=["nvim"], at=datetime(2026, 2, 1)))
    checked(store.pin(first.id, True))
    checked(store.set_review(first.id, "pending"))
    checked(store.soft_delete(first.id))
    checked(store.restore(first.id))
    replacement = checked(
        store.supersede(first.id, belief("editor", content="helix"), reason="moved")
    )
    checked(store.get(first.id))
    other = checked(store.create(belief("ide")))
    merged = checked(store.merge([replacement.id, other.id], belief("tools"), reason="same"))
    assert [e.event for e in merged.change_log] == ["supersedes", "supersedes", "merged_from"]


def test_without_history_a_write_returns_the_row_alone(store: BeliefStore) -> None:
    created = store.create(belief("editor"), with_history=False)
    assert created.change_log == []
    assert created == read_back(store, created.id).model_copy(update={"change_log": []})
    assert store.get(created.id, with_history=False) == created


def test_a_returned_belief_is_the_callers_own_copy(store: BeliefStore) -> None:
    created = store.create(belief("editor", aliases=["vim"], provenance={"k": ["v"]}))
    created.aliases.append("emacs")
    created.provenance["k"].append("w")
    held = store.index.get(created.id)
    assert held is not None and held.aliases == ["vim"] and held.provenance == {"k": ["v"]}
    assert store.get(created.id).aliases == ["vim"]


def test_reads_inside_a_transaction_see_the_writes_held_for_its_commit(
    store: BeliefStore,
) -> None:
    with store.transaction():
        a = store.create(belief("editor", content="vim"))
        store.update(a.id, {"content": "neovim"})
        assert [b.content for b in store.list()] == ["neovim"]
        assert store.find_live("u", "editor") is not None
        assert store.execute("SELECT content FROM beliefs").fetchall() == [("neovim",)]
        assert [e.event for e in store.history(a.id)] == ["created", "updated"]
        gone = store.create(belief("scratch"))
        store.hard_delete(gone.id)
        assert store.execute("SELECT count(*) FROM beliefs").fetchone() == (1,)
        assert store.index.get(a.id) is None  # not committed yet
    assert read_back(store, a.id).content == "neovim"
    assert [e.event for e in store.history(gone.id)] == ["created", "deleted"]
    assert store.verify() == []


def test_a_row_created_and_changed_in_one_transaction_lands_once(store: BeliefStore) -> None:
    with store.transaction():
        a = store.create(belief("editor"))
        store.reinforce(a.id, aliases=["vim"])
        b = store.supersede(a.id, belief("editor", content="helix"))
        store.reinforce(b.id)
    rows = store.list(include_superseded=True)
    assert [(r.id, r.superseded_by, r.reinforcement_count) for r in rows] == [
        (a.id, b.id, 2),
        (b.id, None, 2),
    ]
    assert [e.event for e in store.history(a.id)] == ["created", "reinforced", "superseded_by"]
    assert store.verify() == []


def test_a_rolled_back_transaction_leaves_nothing_held(store: BeliefStore) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        store.create(belief("lost", id="lost"))
        raise RuntimeError("boom")
    kept = store.create(belief("kept"))
    assert [b.id for b in store.list(include_deleted=True)] == [kept.id]
    assert store.execute("SELECT count(*) FROM belief_events").fetchone() == (1,)


def test_names_and_ids_are_checked_against_uncommitted_writes(store: BeliefStore) -> None:
    with store.transaction():
        a = store.create(belief("editor"))
        with pytest.raises(CanonicalNameClash):
            store.create(belief("editor"))
        store.soft_delete(a.id)
        b = store.create(belief("editor"))
        with pytest.raises(InvalidBelief, match="already exists"):
            store.create(belief("other", id=a.id))
        with pytest.raises(CanonicalNameClash):
            store.restore(a.id)
    assert {r.id for r in store.list()} == {b.id}


def test_deleted_rows_keep_their_ids_taken(store_location: Path | str) -> None:
    with open_store(store_location) as store:
        soft = store.soft_delete(store.create(belief("soft")).id)
        hard = store.create(belief("hard"))
        store.hard_delete(hard.id)
    with open_store(store_location) as store:  # the memory is rebuilt from the rows
        with pytest.raises(InvalidBelief, match="already exists"):
            store.create(belief("again", id=soft.id))
        again = store.create(belief("hard", id=hard.id))
        assert [e.event for e in again.change_log] == ["created", "deleted", "created"]
        assert store.restore(soft.id) == read_back(store, soft.id)


def test_many_rows_changed_in_one_transaction_are_each_stored_right(store: BeliefStore) -> None:
    a, b, c = (store.create(belief(name)) for name in ("editor", "shell", "font"))
    with store.transaction():
        store.reinforce(a.id, aliases=["vim"])
        store.update(b.id, {"content": "zsh", "pinned": True})
        store.soft_delete(c.id)
        d = store.supersede(a.id, belief("editor", content="helix"), with_history=False)
        returned = [store.get(i, with_history=False) for i in (a.id, b.id, c.id, d.id)]
    for row in returned:
        assert row == read_back(store, row.id).model_copy(update={"change_log": []})
    assert [e.event for e in store.history(a.id)] == ["created", "reinforced", "superseded_by"]
    assert store.verify() == []
