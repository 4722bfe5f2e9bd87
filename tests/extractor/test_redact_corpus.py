"""Every format of the secret corpus is redacted; prose that only talks about secrets is not."""

from __future__ import annotations

import pytest

from extractor.redact import REDACTED, redact, redact_value
from tests.extractor.secret_corpus import NOT_SECRETS, SECRETS


def test_the_corpus_has_at_least_thirty_formats() -> None:
    assert len({case.name for case in SECRETS}) >= 30


@pytest.mark.parametrize("case", SECRETS, ids=[case.name for case in SECRETS])
def test_each_secret_format_is_redacted(case: object) -> None:
    line, secret = case.line, case.secret  # type: ignore[attr-defined]
    redacted = redact(line)
    assert secret not in redacted and REDACTED in redacted
    # No recognisable piece of it is left either (a key cut in half still leaks).
    assert secret[-8:] not in redacted


@pytest.mark.parametrize("line", NOT_SECRETS)
def test_prose_about_secrets_is_left_alone(line: str) -> None:
    assert redact(line) == line


def test_the_issue_examples_in_one_turn() -> None:
    turn = {
        "user_message": "Stripe sk_live_51HxQk2eZvKYlo2C0aB3dE4f, DB_PASSWORD=Tr0ub4dor&3 "
        "MYSQL_ROOT_PASSWORD=c0rrect-h0rse, glpat-Ab3dE5gH7jK9mN1pQ3sT and pw: s3cr3tpw",
        "tool_calls": [{"function": {"arguments": '{"dsn": "postgres://u:pAss9word@h/db"}'}}],
    }
    text = str(redact_value(turn))
    for secret in (
        "sk_live_51HxQk2",
        "Tr0ub4dor",
        "c0rrect-h0rse",
        "glpat-Ab3",
        "s3cr3tpw",
        "pAss9",
    ):
        assert secret not in text
