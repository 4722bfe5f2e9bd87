"""A bounded index on a real DuckDB file: whole users, the most recently active first; others
read when asked for, the least recent let go; no write lost for a user it does not hold."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

from beliefs.context.assembly import ContextRequest, assemble
from beliefs.opening import open_store
from beliefs.search.matcher import search
from beliefs.text.query import parse_query
from tests.beliefs.factory import T0, belief

USERS = 8
EACH = 20


def _seed(path: Path) -> None:
    """User u<n> was last active n hours after T0: u7 is the most recent."""
    with open_store(path) as store:
        store.import_beliefs(
            [
                belief(
                    f"u{u}-b{i}",
                    f"tool_{u}_{i}",
                    [f"alias{i}", "shared"],
                    user_id=f"u{u}",
                    updated_at=T0 + timedelta(hours=u),
                    last_reinforced_at=T0 + timedelta(hours=u),
                )
                for u in range(USERS)
                for i in range(EACH)
            ]
        )


def test_the_most_recently_active_users_are_held_first(tmp_path: Path) -> None:
    _seed(tmp_path / "t.duckdb")
    with open_store(tmp_path / "t.duckdb", bound=3 * EACH + 5) as store:
        index = store.index
        assert [u for u in (f"u{n}" for n in range(USERS)) if index.held(u)] == ["u5", "u6", "u7"]
        assert len(index) == 3 * EACH
        # A user it does not hold is read when asked for; the least recent (u5) goes.
        assert len(index.beliefs("u0")) == EACH
        assert index.held("u0") and not index.held("u5")
        assert len(index) <= 3 * EACH + 5 and index.loads == 1 and index.evictions == 1


def test_reads_of_a_user_not_held_see_the_store(tmp_path: Path) -> None:
    _seed(tmp_path / "t.duckdb")
    with open_store(tmp_path / "t.duckdb", bound=2 * EACH) as store:
        assert not store.index.held("u1")
        assert store.get("u1-b3").canonical_name == "tool_1_3"
        assert store.index.held("u1")
        assert [b.id for b in store.index.by_name("u2", "tool_2_4")] == ["u2-b4"]
        terms = parse_query("which shared alias7 setup?")
        found = search(store.index, "u3", terms, lambda b: True)
        assert found and found[0].belief.id == "u3-b7"


def test_writes_to_a_user_not_held_are_not_lost(tmp_path: Path) -> None:
    _seed(tmp_path / "t.duckdb")
    with open_store(tmp_path / "t.duckdb", bound=2 * EACH) as store:
        index = store.index
        store.create(belief("u0-new", "fresh_tool", ["fresh"], user_id="u0"))
        assert "u0-new" in {b.id for b in index.beliefs("u0")}
        store.update("u1-b2", {"content": "changed while not held"})
        store.soft_delete("u2-b5")
        assert index.get("u1-b2") is not None
        assert store.get("u1-b2").content == "changed while not held"
        assert "u2-b5" not in {b.id for b in index.beliefs("u2")}
        assert store.get("u2-b5").deleted_at is not None
        # A write to a held user is held at once, as unbounded.
        store.update("u1-b3", {"content": "held now"})
        assert index.get("u1-b3") is not None and index.get("u1-b3").content == "held now"


def test_a_user_read_without_waiting_is_held_soon(tmp_path: Path) -> None:
    _seed(tmp_path / "t.duckdb")
    with open_store(tmp_path / "t.duckdb", bound=2 * EACH) as store:
        index = store.index
        index.load_soon("u4")
        deadline = time.monotonic() + 120  # a bound for a hang, not a margin
        while not index.held("u4") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert index.held("u4") and len(index.beliefs("u4")) == EACH


def test_a_held_user_is_searched_as_an_unbounded_index_searches(tmp_path: Path) -> None:
    _seed(tmp_path / "t.duckdb")
    queries = ["alias3 and the shared one", "what about alias5", "alias11 alias12 shared"]
    with open_store(tmp_path / "t.duckdb") as whole:
        expected = [
            [(h.belief.id, h.score) for h in search(whole.index, "u2", parse_query(q), bool)]
            for q in queries
        ]
    with open_store(tmp_path / "t.duckdb", bound=EACH) as bounded:
        got = [
            [(h.belief.id, h.score) for h in search(bounded.index, "u2", parse_query(q), bool)]
            for q in queries
        ]
    assert got == expected and all(expected)


def test_edits_while_a_user_is_read_in_the_background_all_land(tmp_path: Path) -> None:
    _seed(tmp_path / "t.duckdb")
    with open_store(tmp_path / "t.duckdb", bound=2 * EACH) as store:
        index = store.index
        for round_ in range(5):
            user = f"u{round_}"
            index.load_soon(user)
            for i in range(EACH):
                store.update(f"{user}-b{i}", {"content": f"edit {round_}.{i}"})
            deadline = time.monotonic() + 120
            while user in index._soon and time.monotonic() < deadline:
                time.sleep(0.01)
            held = {b.id: b.content for b in index.beliefs(user)}
            stored = {b.id: b.content for b in store.list(user_id=user)}
            assert held == stored and len(held) == EACH


def test_a_relation_naming_another_users_belief_reads_no_other_user(tmp_path: Path) -> None:
    _seed(tmp_path / "t.duckdb")
    with open_store(tmp_path / "t.duckdb") as store:
        store.create(
            belief(
                "u7-rel",
                "tool_pairing",
                ["pairing"],
                user_id="u7",
                type="relation",
                participants=["u7-b1", "u0-b1"],
            )
        )
    with open_store(tmp_path / "t.duckdb", bound=EACH + 1) as store:
        assert store.index.held("u7") and not store.index.held("u0")
        context = assemble(store.index, ContextRequest("u7", ("domain:code",), "the pairing tool"))
        ids = [h.belief.id for h in context.relevant]
        assert ids[:2] == ["u7-rel", "u7-b1"] and "u0-b1" not in ids
        assert not store.index.held("u0") and store.index.loads == 0
