"""Every format of the secret corpus is redacted; prose that only talks about secrets is not."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from extractor.redact import REDACTED, redact, redact_every_rule, redact_value
from tests.extractor import secret_corpus_general as general
from tests.extractor.secret_corpus import NOT_SECRETS, SECRETS, Case

ALL_SECRETS = SECRETS + general.SECRETS
ALL_PROSE = NOT_SECRETS + general.NOT_SECRETS


def test_the_corpora_have_their_formats_and_look_alikes() -> None:
    assert len({case.name for case in SECRETS}) >= 30
    assert len({case.name for case in general.SECRETS}) >= 40
    assert len(set(general.NOT_SECRETS)) >= 30
    # The general corpus holds no format of the first one.
    assert not {c.name for c in SECRETS} & {c.name for c in general.SECRETS}


@pytest.mark.parametrize("case", ALL_SECRETS, ids=[case.name for case in ALL_SECRETS])
def test_each_secret_format_is_redacted(case: Case) -> None:
    redacted = redact(case.line)
    assert case.secret not in redacted and REDACTED in redacted
    # No recognisable piece of it is left either (a key cut in half still leaks).
    assert case.secret[-8:] not in redacted


@pytest.mark.parametrize("line", ALL_PROSE)
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


REPLIES = sorted((Path(__file__).parents[1] / "fixtures" / "replies").glob("*.md"))
EDGES = [
    "apitoken Zx9aQ2mP7rT4wL8kN3vBq1w2 done",
    "x-api-key: Zx9aQ2mP7rT4wL8kN3vBq1w2e and é-token=Zx9aQ2mP7rT4wL8kN3vBq1w2",
    "MY_SERVICE_API_KEY=abc123def456 and the monkey Zx9aQ2mP7rT4wL8kN3vBq1w2",
    "İstanbul: token Zx9aQ2mP7rT4wL8kN3vBq1w2 and password: hunter22x",  # İ lowers to two
    "a" * 300 + "token Zx9aQ2mP7rT4wL8kN3vBq1w2",  # a word of 300 letters ending in a trigger
    "123456789:" + "A1" * 20 + " and x123456789:" + "B2" * 20,
    "password password: pw1 then passwordpassword is Kx9-lake-22",
    "expo token: Zx9aQ2mP7rT4wL8kN3vBq1w2 (vault) s.Zx9aQ2mP7rT4wL8kN3vBq1w",
    "api key Zx9aQ2mP7rT4wL8kN3vBq1w2 and private key Yx9aQ2mP7rT4wL8kN3vBq1w2",
]


def test_redaction_finds_what_every_rule_over_the_whole_text_finds() -> None:
    """The triggers and the places they stand are shortcuts: over every line of the corpora,
    the sample replies, edge cases and random joins of them, `redact` equals running every
    rule over the whole text."""
    texts = [case.line for case in ALL_SECRETS] + list(ALL_PROSE) + EDGES
    texts += [path.read_text() for path in REPLIES]
    pick = random.Random(5)
    texts += [
        pick.choice([" ", "\n", "", "_", "-"]).join(pick.sample(texts, 3)) for _ in range(600)
    ]
    differ = [text for text in texts if redact(text) != redact_every_rule(text)]
    assert len(REPLIES) >= 3 and not differ, differ[:3]
