"""The turn memories written in one commit go as few statements, and read back as written."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

from beliefs.opening import open_store
from proxy.gateway.loop_memory import SAVE_CHUNK, save_rows
from proxy.gateway.tables import MIGRATIONS as GATEWAY_TABLES

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def row(key: str, n: int) -> list[object]:
    layers = json.dumps({"relevant": [f"b{n}"]})
    at = START + timedelta(seconds=n)
    return [key, at, f"system {n}", f"user {n}", layers, n % 2 == 0, f"query {n}", None, None]


def saved(store_location: Path | str, rows: list[list[object]]) -> dict[str, list[object]]:
    """`rows` deferred in one commit; the table's rows by key, read back."""
    with open_store(store_location) as store:
        store.ensure_schema(GATEWAY_TABLES)
        with store.transaction():
            for values in rows:
                store.defer("turn_memory", partial(save_rows, store), values)
        found = store.execute(
            "SELECT key, system_block, user_block, query, persona FROM turn_memory"
        ).fetchall()
    return {key: rest for key, *rest in found}


def test_one_commit_of_more_turns_than_a_statement_holds_saves_them_all(
    store_location: Path | str,
) -> None:
    count = SAVE_CHUNK + 44
    by_key = saved(store_location, [row(f"turn-{n}", n) for n in range(count)])
    assert len(by_key) == count
    assert by_key["turn-4"] == ["system 4", "user 4", "query 4", True]
    last = f"turn-{count - 1}"
    assert by_key[last] == [f"system {count - 1}", f"user {count - 1}", f"query {count - 1}", False]


def test_a_turn_saved_twice_in_one_commit_keeps_its_later_row(store_location: Path | str) -> None:
    by_key = saved(store_location, [row("turn-a", 1), row("turn-b", 2), row("turn-a", 3)])
    assert by_key == {
        "turn-a": ["system 3", "user 3", "query 3", False],
        "turn-b": ["system 2", "user 2", "query 2", True],
    }


def test_a_turn_saved_in_a_later_commit_replaces_its_row(store_location: Path | str) -> None:
    with open_store(store_location) as store:
        store.ensure_schema(GATEWAY_TABLES)
        for n in (1, 2):
            with store.transaction():
                store.defer("turn_memory", partial(save_rows, store), row("turn", n))
        rows = store.execute("SELECT key, layers, user_block FROM turn_memory").fetchall()
    assert len(rows) == 1
    assert rows[0][0] == "turn" and rows[0][2] == "user 2"
    assert "b2" in str(rows[0][1])


def test_a_secret_typed_into_a_turn_is_never_written(store_location: Path | str) -> None:
    secret = "sk-proj-abcdefghijklmnop1234567890"
    typed = row("turn", 1)
    typed[6] = f"why does {secret} get a 401?"
    by_key = saved(store_location, [typed])
    query = str(by_key["turn"][2])
    assert secret not in query and query.startswith("why does ")
