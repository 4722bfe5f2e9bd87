"""The rewrite of the store's statements into PostgreSQL's dialect (pure; the statements
themselves run against a real server in the store and API suites)."""

from __future__ import annotations

from beliefs.store.backend import redacted
from beliefs.store.postgres import to_postgres


def test_placeholders_become_psycopg_ones_but_not_inside_quotes() -> None:
    out = to_postgres("SELECT ? FROM t WHERE a = '?' AND b LIKE '50%' AND c = $1")
    assert out.sql == "SELECT %s FROM t WHERE a = '?' AND b LIKE '50%%' AND c = %s"


def test_list_functions_become_array_operators() -> None:
    sql = to_postgres("WHERE list_has_any(scope, ?) AND list_contains(scope, ?)").sql
    assert sql == (
        "WHERE (CAST(scope AS text[]) && CAST(%s AS text[])) "
        "AND (CAST(scope AS text[]) @> ARRAY[CAST(%s AS text)])"
    )


def test_insert_or_replace_becomes_an_upsert_on_the_key() -> None:
    sql = to_postgres("INSERT OR REPLACE INTO p (k, v, w) VALUES (?, ?, now())", ("k",)).sql
    assert sql == (
        "INSERT INTO p (k, v, w) VALUES (%s, %s, now()) "
        "ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v, w = EXCLUDED.w"
    )


def test_a_list_of_structs_parameter_becomes_a_json_recordset() -> None:
    out = to_postgres(
        "INSERT INTO j (id, doc) SELECT r.id, r.doc FROM "
        "(SELECT unnest(?::STRUCT(id VARCHAR, doc VARCHAR, tags VARCHAR[])[]) AS r)",
        json_fields=frozenset({"doc"}),
    )
    assert out.sql == (
        "INSERT INTO j (id, doc) SELECT r.id, r.doc FROM "
        "json_to_recordset(%s::json) AS r(id VARCHAR, doc json, tags VARCHAR[])"
    )
    assert out.records == ((0, ("id", "doc", "tags")),)


def test_ddl_doubles_get_their_precision() -> None:
    assert to_postgres("CREATE TABLE t (x DOUBLE NOT NULL)").sql == (
        "CREATE TABLE t (x DOUBLE PRECISION NOT NULL)"
    )


def test_messages_never_show_the_password() -> None:
    assert (
        redacted("postgresql://app:s3cret@db:5432/tenure") == "postgresql://app:***@db:5432/tenure"
    )
