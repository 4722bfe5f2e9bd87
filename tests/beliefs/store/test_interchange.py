"""Parsing and writing Tenure JSON and our JSONL."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from beliefs.model.errors import ImportRejected
from beliefs.model.models import Belief
from beliefs.store.interchange import detect_format, parse, read_file, to_jsonl, to_tenure
from tests.data import SAMPLE_BELIEFS


def tenure_entry(**kw: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "_id": "b-1",
        "user_id": "u",
        "type": "preference",
        "canonical_name": "tone",
        "aliases": ["voice"],
        "content": "Direct.",
        "why_it_matters": "Shapes replies.",
        "scope": ["user:universal"],
        "epistemic_status": "active",
        "confidence": 0.9,
        "pinned": False,
        "reinforcement_count": 1,
        "last_reinforced_at": "2026-01-02T00:00:00Z",
        "user_edited": False,
        "resolved_at": None,
        "superseded_by": None,
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-02T00:00:00Z",
        "change_log": [],
        "provenance": {"session_id": "s"},
    }
    entry.update(kw)
    return entry


def test_seed_parses_with_ids_links_and_import_source() -> None:
    beliefs = read_file(SAMPLE_BELIEFS)
    assert len(beliefs) == 20
    by_id = {b.id: b for b in beliefs}
    assert by_id["b-queue-v0"].superseded_by == "b-queue-v1"
    assert by_id["b-queue-v1"].superseded_by == "b-queue-current"
    assert all(b.source_type == "import" for b in beliefs)
    assert by_id["b-hosting-resolved"].resolved_at == datetime(2026, 8, 1, tzinfo=UTC)


def test_format_detection() -> None:
    assert detect_format('  [{"_id": 1}]') == "tenure"
    assert detect_format('{"id": "x"}\n') == "jsonl"


def test_tenure_change_log_entries_keep_every_key() -> None:
    log = [
        {"timestamp": "2026-01-03T00:00:00Z", "type": "reinforced", "by": "agent", "turn": 7},
        {"note": "no time or kind"},
    ]
    (belief,) = parse(json.dumps([tenure_entry(change_log=log)]))
    first, second = belief.change_log
    assert (first.at, first.event, first.actor) == (
        datetime(2026, 1, 3, tzinfo=UTC),
        "reinforced",
        "agent",
    )
    assert first.detail["turn"] == 7
    assert second.at == belief.updated_at and second.event == "change"
    assert json.loads(to_tenure([belief]))[0]["change_log"] == log


def test_unknown_tenure_fields_are_kept_in_provenance_and_written_back() -> None:
    entry = tenure_entry(salience=0.4, agent_id="a1", participants=["x"])
    (belief,) = parse(json.dumps([entry]))
    assert belief.provenance == {"session_id": "s", "tenure_extra": {"salience": 0.4}}
    assert json.loads(to_tenure([belief])) == [entry]


def test_jsonl_round_trips_every_field() -> None:
    belief = Belief.model_validate(
        {
            "id": "b-x",
            "user_id": "u",
            "canonical_name": "x",
            "rejected_alternatives": ["y"],
            "memory_class": "procedural",
            "delivery": "on_demand",
            "review_state": "pending",
            "source_type": "extracted",
            "expires_at": "2027-01-01T00:00:00.123456Z",
            "invalidated_at": "2026-05-01T00:00:00Z",
            "invalidation_reason": "why not",
            "deleted_at": "2026-06-01T00:00:00Z",
            "provenance": {"request_id": "r"},
            "change_log": [{"at": "2026-01-01T00:00:00Z", "event": "created", "detail": {"a": 1}}],
        }
    )
    lines = list(to_jsonl([belief]))
    assert parse("\n".join(lines)) == [belief]
    assert list(to_jsonl(parse("\n".join(lines)))) == lines


def test_naive_times_are_read_as_utc() -> None:
    (belief,) = parse(json.dumps([tenure_entry(created_at="2026-01-01T00:00:00")]))
    assert belief.created_at == datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[{"_id": "b-1",', "not valid JSON (line 1"),
        ('{"a": 1}', "Tenure format is a JSON array"),
        ("[1]", "entry 0: expected a JSON object, got int"),
        (
            json.dumps([tenure_entry(), tenure_entry(_id="b-2", confidence="high")]),
            "entry 1 (id b-2): field confidence:",
        ),
        (json.dumps([tenure_entry(aliases="voice")]), "entry 0 (id b-1): field aliases:"),
        (json.dumps([tenure_entry(scope=["nowhere"])]), "'nowhere' is not one of"),
        (json.dumps([tenure_entry(id="x")]), "has both _id and id"),
        (json.dumps([tenure_entry(change_log="x")]), "field change_log: expected a list"),
    ],
)
def test_bad_tenure_files_name_the_entry_and_field(text: str, message: str) -> None:
    with pytest.raises(ImportRejected, match=r"nothing was imported|Tenure format") as caught:
        parse(text, "tenure", source="f.json")
    assert message in str(caught.value)
    assert str(caught.value).startswith("f.json")


def test_bad_jsonl_names_the_line() -> None:
    good = next(to_jsonl([Belief(user_id="u", canonical_name="x")]))
    with pytest.raises(ImportRejected, match="line 3 is not valid JSON"):
        parse(f"{good}\n\n{{oops\n", "jsonl")
    with pytest.raises(ImportRejected, match=r"entry 1 \(line 2\): field colour"):
        parse(f'{good}\n{{"colour": "red", "user_id": "u", "canonical_name": "y"}}\n', "jsonl")


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ImportRejected, match="no such file"):
        read_file(tmp_path / "missing.json")
    latin = tmp_path / "latin.json"
    latin.write_bytes(b"[\xff]")
    with pytest.raises(ImportRejected, match="not UTF-8"):
        read_file(latin)
