from __future__ import annotations

import pytest

from extractor.redact import REDACTED, redact, redact_record, redact_value

SECRETS = [
    "sk-proj-abcdefghijklmnop1234567890",
    "sk-ant-api03-AAAAbbbbCCCC1234dddd",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9",
]


@pytest.mark.parametrize("secret", SECRETS)
def test_known_key_shapes_are_redacted(secret: str) -> None:
    text = f"please use {secret} for the deploy"
    assert redact(text) == f"please use {REDACTED} for the deploy"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc.def-123456789", f"Authorization: Bearer {REDACTED}"),
        ("password=hunter2 and more", f"password={REDACTED} and more"),
        ('PASSWORD: "s3cret pass"', f"PASSWORD: {REDACTED}"),
        ("my password is hunter2", f"my password is {REDACTED}"),
        ("api_key=Zx9aQ2mP7rT4wL8kN3vB", f"api_key={REDACTED}"),
        ("secret: a1b2c3d4e5f6g7h8i9j0", f"secret: {REDACTED}"),
        ("token abcdef0123456789abcdef", f"token {REDACTED}"),
        ("postgres://app:pa55word@db/prod", f"postgres://app:{REDACTED}@db/prod"),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY----- ok",
            f"{REDACTED} ok",
        ),
    ],
)
def test_secrets_after_their_names_are_redacted(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "We use Redis and TypeScript strict mode",
        "the token_budget_configuration is nice",
        "set the token budget to 1024 tokens",
        "our secret sauce is consistency",
    ],
)
def test_prose_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_redaction_is_idempotent() -> None:
    once = redact("api_key=Zx9aQ2mP7rT4wL8kN3vB and Bearer abcdefghijk123")
    assert redact(once) == once


def test_nested_values_are_redacted() -> None:
    value = {"function": {"arguments": '{"key": "sk-abcdefghijklmnopqrstu"}'}, "n": [1, "x"]}
    out = redact_value(value)
    assert "sk-abcdefghijklmnopqrstu" not in str(out)
    assert out["n"] == [1, "x"]


def test_a_secret_found_in_one_field_is_masked_in_every_field_of_the_record() -> None:
    record = {
        "statement": "the deploy password: Kx9-Hunter-7q",
        "why_it_matters": "type Kx9-Hunter-7q at the prompt",
        "aliases": ["Kx9-Hunter-7q", "deploy"],
        "nested": {"note": "see 'Kx9-Hunter-7q'"},
    }
    masked = redact_record(record)
    assert "Kx9-Hunter-7q" not in str(masked)
    assert masked["aliases"] == [REDACTED, "deploy"]
    assert masked["statement"] == f"the deploy password: {REDACTED}"
    # Field by field, only the named one is caught: the record pass is what masks the rest.
    assert "Kx9-Hunter-7q" in str(redact_value(record))


def test_a_short_secret_is_not_hunted_through_other_fields() -> None:
    masked = redact_record({"a": "pw: abc", "b": "abcdef alphabet"})
    assert masked == {"a": f"pw: {REDACTED}", "b": "abcdef alphabet"}


def test_a_secret_is_masked_wherever_one_string_repeats_it() -> None:
    raw = '{"content": "db password: Kx9-Hunter-7q", "aliases": ["Kx9-Hunter-7q"]}'
    assert "Kx9-Hunter-7q" not in redact(raw)


@pytest.mark.parametrize("name", ["expo", "render", "ably", "fly.io", "1password", "new relic"])
def test_a_service_key_is_redacted_wherever_its_name_stands_as_a_word(name: str) -> None:
    key = "Zx9aQ2mP7rT4wL8kN3vBq1w2"
    for text in (f"{name} key {key}", f"({name.title()}): {key}", f"in {name.upper()} use {key}"):
        assert key not in redact(text), text
        assert redact(f"{text}, probably after the export renders") == (
            redact(text) + ", probably after the export renders"
        )
