"""The DuckDB store: every operation checked by the rows, events and index it leaves behind."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from beliefs.model.errors import (
    BeliefError,
    BeliefNotFound,
    CanonicalNameClash,
    ChainError,
    ImportRejected,
    InvalidBelief,
)
from beliefs.model.models import Belief, utcnow
from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore
from beliefs.store.migrations import MIGRATIONS


def belief(name: str, **kw: Any) -> Belief:
    return Belief(user_id=kw.pop("user_id", "u"), canonical_name=name, **kw)


def indexed(store: BeliefStore, belief_id: str) -> Belief | None:
    return store.index.get(belief_id)


def same_row(store: BeliefStore, belief_id: str) -> None:
    """The index and `get` hold exactly the row in the database (without change_log)."""
    rows = store.list(include_superseded=True, include_deleted=True)
    [stored] = [row for row in rows if row.id == belief_id]
    assert indexed(store, belief_id) == stored
    assert store.get(belief_id).model_copy(update={"change_log": []}) == stored


def test_open_creates_the_file_and_applies_migrations(db_path: Path) -> None:
    with open_store(db_path) as store:
        names = store.execute("SELECT name FROM schema_migrations").fetchall()
    assert db_path.exists()
    assert {m.key for m in MIGRATIONS} <= {name for (name,) in names}


def test_create_and_get_round_trip_every_field(store: BeliefStore) -> None:
    original = belief(
        "Preferred Editor",
        agent_id="agent-1",
        type="entity",
        subtype="style",
        aliases=["vim", "neovim"],
        rejected_alternatives=["emacs"],
        content="Uses neovim.",
        why_it_matters="Shapes editor advice.",
        scope=["domain:code", "project:tenure"],
        epistemic_status="inferred",
        confidence=0.55,
        memory_class="semantic",
        delivery="always",
        review_state="pending",
        source_type="extracted",
        participants=["alice"],
        last_reinforced_at=datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
        expires_at=datetime(2027, 1, 1, tzinfo=UTC),
        resolved_at=datetime(2026, 5, 1, tzinfo=UTC),
        provenance={"request_id": "r1", "model": "m", "nested": {"a": [1, 2]}},
    )
    created = store.create(original, actor="extractor")
    assert created.model_dump(exclude={"change_log"}) == original.model_dump(exclude={"change_log"})
    # delivered always and not written by the operator: an always-on write, an event of its own
    assert [(e.event, e.actor) for e in created.change_log] == [
        ("created", "extractor"),
        ("always_on", "extractor"),
    ]
    assert created.canonical_name == "preferred_editor"
    same_row(store, created.id)


def test_missing_belief_is_a_clear_error(store: BeliefStore) -> None:
    with pytest.raises(BeliefNotFound, match="'nope'"):
        store.get("nope")
    with pytest.raises(BeliefNotFound):
        store.history("nope")


def test_list_filters(store: BeliefStore) -> None:
    a = store.create(belief("a", scope=["domain:code"], type="decision", pinned=True))
    b = store.create(belief("b", scope=["domain:writing"], agent_id="x", review_state="pending"))
    c = store.create(belief("c", user_id="other", epistemic_status="inferred"))
    store.supersede(a.id, belief("a", scope=["domain:code"], type="decision", id="a2"))
    store.soft_delete(b.id)

    def ids(**kw: Any) -> list[str]:
        return [x.id for x in store.list(**kw)]

    assert ids() == [c.id, "a2"]
    assert ids(include_superseded=True) == [a.id, c.id, "a2"]
    assert ids(include_deleted=True) == [b.id, c.id, "a2"]
    assert ids(user_id="other") == [c.id]
    assert ids(scope="domain:code", include_superseded=True) == [a.id, "a2"]
    assert ids(agent_id="x", include_deleted=True) == [b.id]
    assert ids(type="decision") == ["a2"]
    assert ids(status="inferred") == [c.id]
    assert ids(pinned=False) == [c.id, "a2"]
    assert ids(pinned=True, include_superseded=True) == [a.id]
    assert ids(review_state="pending", include_deleted=True) == [b.id]
    assert ids(limit=1, offset=1) == ["a2"]
    assert store.list(with_history=True)[1].change_log[0].event == "supersedes"


def test_update_records_old_and_new_per_field(store: BeliefStore) -> None:
    b = store.create(belief("tone", content="formal", confidence=0.5))
    updated = store.update(
        b.id, {"content": "casual", "confidence": 0.9}, actor="ui", reason="user said so"
    )
    event = updated.change_log[-1]
    assert (event.event, event.actor) == ("updated", "ui")
    assert event.detail == {
        "changes": {
            "content": {"old": "formal", "new": "casual"},
            "confidence": {"old": 0.5, "new": 0.9},
        },
        "reason": "user said so",
    }
    assert updated.updated_at > b.updated_at
    same_row(store, b.id)
    unchanged = store.update(b.id, {"content": "casual"})
    assert len(unchanged.change_log) == 2


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"superseded_by": "x"}, "use supersede"),
        ({"deleted_at": None}, "soft_delete"),
        ({"colour": "red"}, "unknown field"),
        ({"confidence": 2}, "confidence"),
        ({"scope": ["galaxy:far"]}, "galaxy:far"),
    ],
)
def test_update_rejects_bad_changes(
    store: BeliefStore, changes: dict[str, Any], message: str
) -> None:
    b = store.create(belief("x"))
    with pytest.raises(InvalidBelief, match=message):
        store.update(b.id, changes)
    assert store.get(b.id) == b


def test_pin_and_review_are_events(store: BeliefStore) -> None:
    b = store.create(belief("x"))
    store.pin(b.id, True)
    store.set_review(b.id, "rejected")
    after = store.pin(b.id, False)
    assert [e.event for e in after.change_log] == ["created", "pinned", "rejected", "unpinned"]
    assert after.review_state == "rejected" and not after.pinned
    same_row(store, b.id)


def test_canonical_name_is_unique_among_live_beliefs_per_scope(store: BeliefStore) -> None:
    first = store.create(belief("Tool", scope=["domain:code"]))
    with pytest.raises(CanonicalNameClash, match=first.id):
        store.create(belief("tool", scope=["domain:code", "project:x"]))
    store.create(belief("tool", scope=["domain:writing"]))
    store.create(belief("tool", scope=["domain:code"], user_id="someone-else"))
    other = store.create(belief("other", scope=["domain:code"]))
    with pytest.raises(CanonicalNameClash, match=first.id):
        store.update(other.id, {"canonical_name": "tool"})
    store.soft_delete(first.id)
    replacement = store.create(belief("tool", scope=["domain:code"]))
    with pytest.raises(CanonicalNameClash, match=replacement.id):
        store.restore(first.id)
    assert store.get(first.id).deleted_at is not None


def test_supersede_inserts_then_stamps_in_one_step(store: BeliefStore) -> None:
    old = store.create(belief("linting", aliases=["tslint"]))
    new = store.supersede(old.id, belief("linting", aliases=["eslint"]), reason="moved on")
    stamped = store.get(old.id)
    assert stamped.superseded_by == new.id
    assert stamped.epistemic_status == "superseded"
    assert stamped.invalidation_reason == "moved on"
    assert stamped.invalidated_at is not None
    assert stamped.change_log[-1].event == "superseded_by"
    assert stamped.change_log[-1].detail == {"belief_id": new.id, "reason": "moved on"}
    assert new.change_log[-1].event == "supersedes"
    assert new.change_log[-1].detail["belief_id"] == old.id
    live = store.find_live("u", "Linting")
    assert live is not None and live.id == new.id
    assert store.verify() == []
    same_row(store, old.id)
    same_row(store, new.id)


def test_supersede_refusals_change_nothing(store: BeliefStore) -> None:
    a = store.create(belief("a"))
    b = store.supersede(a.id, belief("a"))
    before = store.list(include_superseded=True, with_history=True)
    with pytest.raises(ChainError, match="already superseded"):
        store.supersede(a.id, belief("a"))
    with pytest.raises(ChainError, match="cycle"):
        store.supersede(b.id, belief("a", id=a.id))
    with pytest.raises(ChainError, match="cycle"):
        store.supersede(b.id, belief("a", id=b.id))
    clash = store.create(belief("c"))
    with pytest.raises(CanonicalNameClash, match=clash.id):
        store.supersede(b.id, belief("c"))
    with pytest.raises(InvalidBelief, match="already exists"):
        store.supersede(b.id, belief("z", id=clash.id))
    assert store.list(include_superseded=True, with_history=True)[:2] == before
    assert store.verify() == []


def test_reinforce_counts_and_caps_aliases(store: BeliefStore) -> None:
    b = store.create(belief("x", aliases=["one"]))
    at = datetime(2026, 3, 1, tzinfo=UTC)
    after = store.reinforce(b.id, aliases=["ONE", "two"], at=at)
    assert after.reinforcement_count == 2
    assert after.last_reinforced_at == at
    assert after.aliases == ["one", "two"]
    assert after.change_log[-1].detail == {"reinforcement_count": 2, "aliases_added": ["two"]}
    many = store.reinforce(b.id, aliases=[f"alias {n}" for n in range(40)])
    assert len(many.aliases) == 25 and many.aliases[:2] == ["one", "two"]
    same_row(store, b.id)


def test_soft_delete_hides_and_restore_brings_back(store: BeliefStore) -> None:
    b = store.create(belief("x"))
    deleted = store.soft_delete(b.id)
    assert deleted.deleted_at is not None
    assert indexed(store, b.id) is None
    assert store.list() == []
    assert store.find_live("u", "x") is None
    restored = store.restore(b.id)
    assert restored.deleted_at is None
    assert [e.event for e in restored.change_log] == ["created", "deleted", "restored"]
    same_row(store, b.id)


def test_hard_delete_keeps_history_and_relinks_the_chain(store: BeliefStore) -> None:
    v0 = store.create(belief("x"))
    v1 = store.supersede(v0.id, belief("x"))
    v2 = store.supersede(v1.id, belief("x"))
    store.hard_delete(v1.id)
    with pytest.raises(BeliefNotFound):
        store.get(v1.id)
    assert indexed(store, v1.id) is None
    assert store.history(v1.id)[-1].event == "deleted"
    assert store.history(v1.id)[-1].detail == {"hard": True}
    assert store.get(v0.id).superseded_by == v2.id
    assert [b.id for b in store.chain(v0.id)] == [v0.id, v2.id]
    assert store.verify() == []
    same_row(store, v0.id)


def test_chain_from_any_member(store: BeliefStore) -> None:
    ids = [store.create(belief("x")).id]
    for _ in range(3):
        ids.append(store.supersede(ids[-1], belief("x")).id)
    for member in ids:
        assert [b.id for b in store.chain(member)] == ids


def test_as_of_answers_what_was_believed(store: BeliefStore) -> None:
    old = store.create(belief("db", content="postgres"))
    t_old = utcnow()
    new = store.supersede(old.id, belief("db", content="mongo"))
    t_new = utcnow()
    store.soft_delete(new.id)
    t_gone = utcnow()
    store.restore(new.id)
    assert [b.id for b in store.as_of("u", old.created_at - timedelta(seconds=1))] == []
    assert [b.id for b in store.as_of("u", t_old)] == [old.id]
    assert [b.id for b in store.as_of("u", t_new)] == [new.id]
    assert store.as_of("u", t_gone) == []
    assert [b.id for b in store.as_of("u", utcnow())] == [new.id]
    assert [b.id for b in store.as_of("u", t_new.replace(tzinfo=None))] == [new.id]


def test_transaction_rollback_leaves_store_and_index_untouched(store: BeliefStore) -> None:
    kept = store.create(belief("kept"))
    with pytest.raises(RuntimeError), store.transaction():
        store.create(belief("lost", id="lost"))
        store.pin(kept.id, True)
        with store.transaction():
            store.soft_delete(kept.id)
        raise RuntimeError("boom")
    assert store.list(include_deleted=True) == [kept.model_copy(update={"change_log": []})]
    assert indexed(store, "lost") is None
    same_row(store, kept.id)
    assert [e.event for e in store.history(kept.id)] == ["created"]


def test_index_sees_nested_writes_only_after_outermost_commit(store: BeliefStore) -> None:
    with store.transaction():
        with store.transaction():
            store.create(belief("a", id="a"))
        assert indexed(store, "a") is None
    assert indexed(store, "a") is not None
    same_row(store, "a")


def test_index_is_loaded_on_open(store_location: Path | str) -> None:
    with open_store(store_location) as store:
        a = store.create(belief("a"))
        b = store.create(belief("b"))
        store.supersede(a.id, belief("a", id="a2"))
        store.soft_delete(b.id)
    with open_store(store_location) as store:
        assert {a.id, "a2"} == {b.id for b in store.index.beliefs(a.user_id)}
        same_row(store, a.id)


def test_import_is_atomic_and_keeps_history(store: BeliefStore) -> None:
    t = datetime(2026, 1, 1, tzinfo=UTC)
    good = belief("one", id="one", created_at=t, updated_at=t)
    bad = belief("two", id="two", superseded_by="ghost", epistemic_status="superseded")
    with pytest.raises(ImportRejected, match="entry 1 \\(id two\\): superseded_by"):
        store.import_beliefs([good, bad])
    assert store.list(include_deleted=True, include_superseded=True) == []
    log = [{"at": t, "event": "created", "actor": "x", "detail": {"k": 1}}]
    logged = Belief.model_validate({**good.model_dump(), "change_log": log})
    assert store.import_beliefs([logged]) == 1
    assert store.get("one") == logged
    same_row(store, "one")


def test_persona_is_cached_and_written_through(store_location: Path | str) -> None:
    with open_store(store_location) as store:
        assert store.get_persona("u") is None
        written = store.set_persona("u", "You like short answers.", source="deterministic")
        assert store.get_persona("u") == written
        store.execute("UPDATE personas SET text = 'changed behind our back'")
        assert store.get_persona("u") == written  # served from memory
        with pytest.raises(ValueError), store.transaction():
            store.set_persona("u", "rolled back", source="operator")
            raise ValueError
        assert store.get_persona("u") == written
    with open_store(store_location) as store:
        persona = store.get_persona("u")
        assert persona is not None and persona.text == "changed behind our back"


def test_read_only_store_reads_but_refuses_writes(store_location: Path | str) -> None:
    with open_store(store_location) as store:
        store.create(belief("x", id="x"))
    with open_store(store_location, read_only=True) as store:
        assert store.get("x").canonical_name == "x"
        with pytest.raises(BeliefError, match="read-only"):
            store.pin("x", True)


def test_read_only_needs_an_existing_database(tmp_path: Path) -> None:
    with pytest.raises(BeliefError, match="no belief database"):
        open_store(tmp_path / "missing.duckdb", read_only=True)


def test_create_refuses_duplicate_ids_and_links(store: BeliefStore) -> None:
    store.create(belief("x", id="x"))
    with pytest.raises(InvalidBelief, match="already exists"):
        store.create(belief("y", id="x"))
    with pytest.raises(InvalidBelief, match="superseded_by"):
        store.create(belief("z", superseded_by="x"))
