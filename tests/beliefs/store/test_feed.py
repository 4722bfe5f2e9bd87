"""Two stores on one PostgreSQL database (two replicas) keep one memory through the feed."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from beliefs.model.models import Belief
from beliefs.model.rules import Rule
from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore
from beliefs.store.conflicts import mark_resolved, record_conflict
from beliefs.store.feed import Listener
from beliefs.store.rule_store import create_rule


@pytest.fixture
def replicas(pg_url: str) -> Iterator[tuple[BeliefStore, BeliefStore]]:
    a = open_store(pg_url, replica="a")
    b = open_store(pg_url, replica="b")
    yield a, b
    a.close()
    b.close()


def belief(name: str, **kw: object) -> Belief:
    return Belief.model_validate(
        {"user_id": "u", "canonical_name": name, "content": f"About {name}.", **kw}
    )


def test_a_write_on_one_replica_reaches_the_others_memory(
    replicas: tuple[BeliefStore, BeliefStore],
) -> None:
    a, b = replicas
    made = a.create(belief("queue", id="q1"))
    assert b.index.get("q1") is None
    assert b.catch_up() == 1
    assert b.index.get("q1") == a.index.get("q1") == made.model_copy(update={"change_log": []})
    a.supersede("q1", belief("queue", id="q2", content="Now Kafka."))
    a.soft_delete("q2")
    b.catch_up()
    assert {x.id for x in b.index.beliefs("u")} == {x.id for x in a.index.beliefs("u")} == {"q1"}
    assert b.get("q1").superseded_by == "q2"
    a.hard_delete("q2")
    b.catch_up()
    assert b.verify() == [] and not b._exists("q2")


def test_personas_and_rules_follow_and_own_changes_are_not_reapplied(
    replicas: tuple[BeliefStore, BeliefStore],
) -> None:
    a, b = replicas
    a.set_persona("u", "Terse.", source="operator")
    create_rule(a, Rule(id="r-x", pattern="domain:x", bonus=0.3))
    assert a.catch_up() == 0  # its own changes are already in its memory
    assert b.catch_up() == 2
    persona = b.get_persona("u")
    assert persona is not None and persona.text == "Terse."
    assert "r-x" in {r.id for r in b.rules.rules}


def test_a_rolled_back_write_is_never_seen(replicas: tuple[BeliefStore, BeliefStore]) -> None:
    a, b = replicas
    with pytest.raises(ValueError), a.transaction():
        a.create(belief("ghost", id="g"))
        raise ValueError
    a.create(belief("real", id="r"))
    b.catch_up()
    assert b.index.get("g") is None and b.index.get("r") is not None
    assert b.feed is not None and b.feed.status(b)["lag_changes"] == 0


def test_the_listener_wakes_the_follower_within_a_bounded_delay(
    replicas: tuple[BeliefStore, BeliefStore], pg_url: str
) -> None:
    a, b = replicas
    woke = threading.Event()
    listener = Listener(pg_url, woke.set)
    listener.start()
    try:
        assert woke.wait(5) and listener.connected
        woke.clear()
        started = time.monotonic()
        a.create(belief("prompt", id="p"))
        assert woke.wait(2)
        assert time.monotonic() - started < 0.9  # the notice, not the once-a-second poll
        b.catch_up()
        assert b.index.get("p") is not None
    finally:
        listener.stop()


def terminate_backends(url: str) -> int:
    """Kill every connection of the test's role but this one (as a server restart would)."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE usename = current_user AND pid <> pg_backend_pid()"
        ).fetchone()
    return int(row[0]) if row else 0


def test_dropped_connections_are_replaced_and_a_replica_catches_up_after(
    replicas: tuple[BeliefStore, BeliefStore], pg_url: str
) -> None:
    a, b = replicas
    a.create(belief("before", id="p1"))
    assert terminate_backends(pg_url) >= 2  # both stores' pooled connections
    # The next unit of work on either store takes a new, checked connection: nothing fails.
    a.create(belief("after", id="p2"))
    with a.transaction():
        a.create(belief("inside", id="p3"))
    assert b.catch_up() == 3
    assert {x.id for x in b.index.beliefs("u")} == {"p1", "p2", "p3"}
    assert b.verify() == []


def test_an_open_contradiction_reaches_the_other_replica_and_leaves_it_when_resolved(
    replicas: tuple[BeliefStore, BeliefStore],
) -> None:
    a, b = replicas
    a.create(belief("queue", id="q1"))
    b.catch_up()
    with a.transaction():
        proposed = belief("queue", id="q9", content="Now Kafka.")
        conflict_id = record_conflict(
            a, user_id="u", existing_id="q1", reason="Kafka now", proposed=proposed
        )
    assert conflict_id is not None
    assert [c.claim for c in a.contested.of("q1")] == ["Now Kafka."]
    assert b.contested.of("q1") == ()
    b.catch_up()
    assert [c.claim for c in b.contested.of("q1")] == ["Now Kafka."]
    with a.transaction():
        mark_resolved(a, conflict_id, "keep_existing", new_id=None)
    b.catch_up()
    assert a.contested.of("q1") == b.contested.of("q1") == ()
