from __future__ import annotations

import pytest

from beliefs.text.mentions import chosen_names, moved_to, same_option, swapped_span


@pytest.mark.parametrize(
    ("text", "chosen"),
    [
        ("Design schemas and queries for PostgreSQL 16.", ["postgresql"]),
        ("Switched from PostgreSQL to CockroachDB 24.", ["cockroachdb"]),
        ("Use CockroachDB instead of PostgreSQL.", ["cockroachdb"]),
        ("We no longer use PostgreSQL but CockroachDB.", ["cockroachdb"]),
        ("Never deploy to Heroku; use Fly.io.", ["fly.io"]),
        ("Do not use MySQL for anything.", []),
    ],
)
def test_names_in_a_ruled_out_clause_are_not_the_choice(text: str, chosen: list[str]) -> None:
    names = ["postgresql", "cockroachdb", "heroku", "fly.io", "mysql"]
    assert chosen_names(text, names) == chosen


def test_other_spellings_of_an_option() -> None:
    assert same_option("postgres", "postgresql") and same_option("pg", "PostgreSQL")
    assert not same_option("db", "postgresql") and not same_option("pnpm", "postgresql")


def test_a_swap_is_one_short_run_of_words_for_another() -> None:
    assert swapped_span("The database is PostgreSQL 16.", "The database is CockroachDB 24.") == (
        "PostgreSQL 16",
        "CockroachDB 24",
    )
    assert swapped_span("Uses yarn for packages.", "Moved from yarn to pnpm.") is None


def test_the_option_a_move_goes_to() -> None:
    assert moved_to("Switched from PostgreSQL to CockroachDB 24 for everything.") == (
        "CockroachDB 24"
    )
    assert moved_to("Uses CockroachDB instead of PostgreSQL.") == "CockroachDB"
    assert moved_to("Deploys go to Fly.io.") is None
