"""The index holds compact records; the full model is built from one when asked for."""

from __future__ import annotations

import pickle
import sys

import pytest

from beliefs.model.models import Belief
from beliefs.model.record import (
    CANONICAL,
    FIELDS,
    NAMES,
    OWN,
    PROFILE,
    REST,
    TEXTS,
    TIMES,
    BeliefRecord,
    as_belief,
    reinforced_seconds,
    spaced_name,
)
from beliefs.text.query import normalize_name
from tests.beliefs.factory import T0, belief, index_of


def _full() -> Belief:
    return belief(
        "b-1",
        "main_database",
        ["Postgres", "PG"],
        rejected_alternatives=["MySQL"],
        participants=["b-2"],
        provenance={"turn": "t-1", "n": 2},
        agent_id="coder",
        memory_class="semantic",
        expires_at=T0,
        pinned=True,
    )


def test_a_record_builds_back_the_belief_it_was_made_of() -> None:
    full = _full()
    record = BeliefRecord.of(full)
    assert record.to_belief() == full
    assert record.to_belief().model_dump() == full.model_dump()
    assert as_belief(record) == full and as_belief(full) is full
    assert record == BeliefRecord.of(full.model_copy())
    assert record != BeliefRecord.of(full.model_copy(update={"content": "other"}))
    assert (record.is_live, record.trust) == (full.is_live, full.trust)


def test_a_record_holds_no_list_a_caller_could_change() -> None:
    record = BeliefRecord.of(_full())
    for name in ("aliases", "rejected_alternatives", "scope", "participants"):
        assert isinstance(getattr(record, name), tuple), name
    built = record.to_belief()
    built.aliases.append("changed")
    built.scope.append("domain:other")
    assert record.aliases == ("Postgres", "PG")
    assert record.scope == ("domain:code",)
    with pytest.raises(AttributeError):
        record.no_such_field = 1  # type: ignore[attr-defined]


def test_records_share_equal_small_values_and_cost_far_less_than_the_model() -> None:
    one, two = (BeliefRecord.of(belief(f"b-{i}", f"name_{i}", ["Redis"])) for i in (1, 2))
    assert one.scope is two.scope and one.participants is two.participants == ()
    assert one.aliases[0] is two.aliases[0]
    full = _full()
    model = sys.getsizeof(full) + sys.getsizeof(full.__dict__)
    assert sys.getsizeof(BeliefRecord.of(full)) < model / 2
    assert sorted(FIELDS) == sorted((*OWN, *PROFILE, *REST, *TEXTS, *TIMES, *NAMES, *CANONICAL))


def test_a_record_s_times_come_back_to_the_microsecond_in_utc() -> None:
    from datetime import UTC, datetime, timedelta, timezone

    made = datetime(2026, 3, 4, 5, 6, 7, 891234, tzinfo=timezone(timedelta(hours=2)))
    full = belief("b-1", "x", created_at=made, updated_at=made, last_reinforced_at=None)
    record = BeliefRecord.of(full)
    assert record.created_at == made and record.created_at.tzinfo is UTC
    assert record.updated_at.isoformat() == "2026-03-04T03:06:07.891234+00:00"
    assert record.last_reinforced_at is None
    old = datetime(1901, 1, 1, tzinfo=UTC)  # before the epoch, and updated before reinforced
    then = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    back = BeliefRecord.of(
        belief(
            "b-2", "y", created_at=then, updated_at=old, last_reinforced_at=old.replace(year=1950)
        )
    )
    assert (back.created_at, back.updated_at, back.last_reinforced_at) == (
        then,
        old,
        old.replace(year=1950),
    )


def test_the_reinforcement_s_seconds_are_the_datetime_s_timestamp_to_the_bit() -> None:
    from datetime import UTC, datetime, timedelta

    times = [
        datetime(2026, 3, 4, 5, 6, 7, 891234, tzinfo=UTC),
        datetime(1901, 1, 1, tzinfo=UTC),
        datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(2099, 7, 1, 0, 0, 0, 1, tzinfo=UTC),
    ]
    times += [times[0] + timedelta(microseconds=7**k) for k in range(1, 20)]
    for updated in times:
        for reinforced in [None, *times]:
            full = belief(
                "b-1", "x", created_at=times[0], updated_at=updated, last_reinforced_at=reinforced
            )
            record = BeliefRecord.of(full)
            expected = (reinforced or updated).timestamp()
            assert reinforced_seconds(record) == expected
            assert index_of(full).user("u1").docs["b-1"].recency == -expected


def test_records_share_their_few_valued_and_unset_fields() -> None:
    one, two = (BeliefRecord.of(belief(f"b-{i}", f"name_{i}", [f"alias {i}"])) for i in (1, 2))
    assert one._profile is two._profile and one._rest is two._rest
    assert (one.user_id, one.scope, one.deleted_at) == ("u1", ("domain:code",), None)
    full = BeliefRecord.of(_full())
    assert full._profile is not one._profile and full._rest is not one._rest
    assert (full.agent_id, full.rejected_alternatives) == ("coder", ("MySQL",))
    # a pointer for each own value, each shared tuple, the names, the texts and the times,
    # past the object's and the collector's headers (16 bytes each)
    assert sys.getsizeof(full) <= 32 + 8 * (len(OWN) + 6) < 32 + 8 * len(FIELDS)


def test_the_index_hands_out_new_models_and_keeps_its_records() -> None:
    index = index_of(_full())
    got = index.get("b-1")
    assert got == _full() and got is not index.get("b-1")
    got.aliases.append("changed")  # a caller's model is its own
    assert index.get("b-1") == _full()
    (record,) = index.records("u1")
    assert record is index.record("b-1") and isinstance(record, BeliefRecord)
    assert index.beliefs("u1") == [_full()] and index.by_name("u1", "main_database") == [_full()]
    assert index.get("missing") is None and index.record("missing") is None


def test_a_built_model_pickles_and_validates_as_a_plain_one() -> None:
    built = BeliefRecord.of(_full()).to_belief()
    assert pickle.loads(pickle.dumps(built)) == _full()
    assert Belief.model_validate(built.model_dump()) == _full()


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("", ""),
        ("Uses Postgres.", ""),
        ("", "why"),
        ("a\0b", "c\0d"),
        ("x", "y\0"),
        ("é 漢字 🙂", "ß"),
    ],
)
def test_a_records_texts_read_back_as_written(content: str, why: str) -> None:
    full = _full().model_copy(update={"content": content, "why_it_matters": why})
    record = BeliefRecord.of(full)
    assert (record.content, record.why_it_matters) == (content, why)
    assert record.to_belief() == full


@pytest.mark.parametrize(
    "name", ["main_database", "postgres", "x_1", "Postgres-DB", "My Thing", "a__b", "_x", "ca_fé"]
)
def test_a_records_canonical_name_reads_back_as_written(name: str) -> None:
    full = _full().model_copy(update={"canonical_name": name})
    record = BeliefRecord.of(full)
    assert record.canonical_name == name and record.to_belief() == full
    (doc,) = index_of(full).user("u1").docs.values()
    assert doc.canonical == normalize_name(name)


def test_a_snake_case_name_is_one_string_with_the_index_s_token() -> None:
    index = index_of(_full())
    (doc,) = index.user("u1").docs.values()
    assert isinstance(doc.belief, BeliefRecord)
    assert doc.canonical == "main database" and doc.canonical is spaced_name(doc.belief)
