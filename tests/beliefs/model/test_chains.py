"""Chain and invariant decisions as pure functions, without a database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from beliefs.model.chains import (
    chain_of,
    check_supersede,
    find_cycles,
    follow,
    links_of,
    order_chain,
    would_cycle,
)
from beliefs.model.errors import ChainError, InvalidBelief
from beliefs.model.models import Belief, HistoryEvent
from beliefs.model.timeline import beliefs_as_of, deleted_spans
from beliefs.store.invariants import import_issues, name_clashes, verify_beliefs

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def belief(bid: str, name: str | None = None, *, day: int = 0, **kw: Any) -> Belief:
    if kw.get("superseded_by"):
        kw.setdefault("epistemic_status", "superseded")
    return Belief(
        id=bid,
        user_id=kw.pop("user_id", "u"),
        canonical_name=name or bid,
        created_at=T0 + timedelta(days=day),
        updated_at=T0 + timedelta(days=day),
        **kw,
    )


def linting() -> list[Belief]:
    return [
        belief("current", "linting", day=20),
        belief("v0", "tslint", day=0, superseded_by="v1"),
        belief("v1", "eslint", day=10, superseded_by="current"),
    ]


def test_follow_stops_at_head_and_reports_cycles() -> None:
    assert follow({"a": "b", "b": "c", "c": None}, "a") == (["a", "b", "c"], False)
    assert follow({"a": "b", "b": "a"}, "a") == (["a", "b"], True)
    assert follow({"a": "missing"}, "a") == (["a"], False)


def test_find_cycles_reports_each_ring_once() -> None:
    links = {"a": "b", "b": "c", "c": "a", "d": "a", "e": None}
    assert find_cycles(links) == [["a", "b", "c"]]
    assert find_cycles({"x": "x"}) == [["x"]]


def test_would_cycle() -> None:
    links = links_of(linting())
    assert would_cycle(links, "current", "v0")
    assert would_cycle(links, "x", "x")
    assert not would_cycle(links, "current", "new")


def test_chain_is_ordered_oldest_first_from_any_member() -> None:
    beliefs = linting()
    for member in ("v0", "v1", "current"):
        assert [b.id for b in chain_of(beliefs, member)] == ["v0", "v1", "current"]


def test_merge_chain_orders_sources_by_creation() -> None:
    merged = [
        belief("head", day=30),
        belief("late", day=9, superseded_by="head"),
        belief("early", day=1, superseded_by="head"),
        belief("root", day=0, superseded_by="late"),
    ]
    assert [b.id for b in order_chain(merged)] == ["root", "early", "late", "head"]


def test_check_supersede_refuses_broken_chains() -> None:
    beliefs = {b.id: b for b in linting()}
    links = links_of(beliefs.values())
    with pytest.raises(ChainError, match="already superseded by v1"):
        check_supersede(beliefs["v0"], belief("new"), links)
    with pytest.raises(ChainError, match="cycle"):
        check_supersede(beliefs["current"], belief("v0", "tslint", superseded_by=None), links)
    with pytest.raises(InvalidBelief, match="already exists"):
        check_supersede(beliefs["current"], belief("v1", "eslint"), {**links, "v1": None})
    with pytest.raises(InvalidBelief, match="user"):
        check_supersede(beliefs["current"], belief("new", user_id="other"), links)
    deleted = belief("gone", deleted_at=T0)
    with pytest.raises(ChainError, match="deleted"):
        check_supersede(deleted, belief("new"), links)
    check_supersede(beliefs["current"], belief("new", "linting"), links)


def test_verify_is_clean_for_a_proper_chain() -> None:
    assert verify_beliefs(linting()) == []


def test_verify_reports_every_kind_of_problem() -> None:
    problems = verify_beliefs(
        [
            belief("a", superseded_by="b"),
            belief("b", superseded_by="a"),
            belief("c", superseded_by="nowhere"),
            belief("d", "same", epistemic_status="active"),
            belief("e", "same"),
            belief("f", superseded_by="e", epistemic_status="active"),
        ]
    )
    text = "\n".join(problems)
    assert "supersession cycle: a -> b -> a" in text
    assert "c: superseded_by nowhere points to no belief" in text
    assert "f: has superseded_by e but epistemic_status is 'active'" in text
    assert "chain has 2 live heads: e, f" in text
    assert "2 live beliefs named 'same' in user:universal: d, e" in text


def test_names_clash_per_scope_and_user_only_among_live_beliefs() -> None:
    beliefs = [
        belief("a", "tool", scope=["domain:code"]),
        belief("b", "tool", scope=["domain:writing"]),
        belief("c", "tool", scope=["domain:code"], user_id="other"),
        belief("d", "tool", scope=["domain:code"], deleted_at=T0),
        belief("e", "tool", scope=["domain:code"], superseded_by="a"),
    ]
    assert name_clashes(beliefs) == []
    beliefs.append(belief("f", "tool", scope=["domain:writing", "project:x"]))
    assert name_clashes(beliefs) == [("u", "tool", "domain:writing", ["b", "f"])]


def test_import_issues_name_entry_id_and_field() -> None:
    existing = [belief("kept", "kept")]
    issues = import_issues([belief("x"), belief("x"), belief("kept", "k2")], existing)
    assert [str(i) for i in issues] == [
        "entry 1 (id x): id: duplicates entry 0",
        "entry 2 (id kept): id: already in the store; delete it there or rename it",
    ]
    dangling = import_issues([belief("y", superseded_by="ghost")], existing)
    assert str(dangling[0]) == (
        "entry 0 (id y): superseded_by: points to ghost, which is neither in the file nor in "
        "the store"
    )
    ring = import_issues([belief("p", superseded_by="q"), belief("q", superseded_by="p")], [])
    assert [i.field for i in ring] == ["superseded_by"]
    assert "cycle p -> q -> p" in ring[0].reason
    clash = import_issues([belief("z", "kept")], existing)
    assert clash[0].field == "canonical_name" and "kept" in clash[0].reason
    assert import_issues([belief("old", superseded_by="kept")], existing) == []


def test_as_of_uses_successor_time_and_delete_spans() -> None:
    beliefs = linting()
    at = {d: T0 + timedelta(days=d) for d in (5, 15, 25)}
    assert [b.id for b in beliefs_as_of(beliefs, at[5], {})] == ["v0"]
    assert [b.id for b in beliefs_as_of(beliefs, at[15], {})] == ["v1"]
    assert [b.id for b in beliefs_as_of(beliefs, at[25], {})] == ["current"]
    events = {
        "current": [
            HistoryEvent(at=T0 + timedelta(days=22), event="deleted"),
            HistoryEvent(at=T0 + timedelta(days=24), event="restored"),
        ]
    }
    assert beliefs_as_of(beliefs, T0 + timedelta(days=23), events) == []
    assert [b.id for b in beliefs_as_of(beliefs, at[25], events)] == ["current"]


def test_deleted_spans_pairs_delete_with_restore() -> None:
    events = [
        HistoryEvent(at=T0, event="deleted"),
        HistoryEvent(at=T0 + timedelta(days=1), event="restored"),
        HistoryEvent(at=T0 + timedelta(days=2), event="deleted"),
    ]
    assert deleted_spans(events) == [(T0, T0 + timedelta(days=1)), (T0 + timedelta(days=2), None)]
