from __future__ import annotations

import json

from beliefs.context.tokens import token_counter
from beliefs.model.models import Belief
from extractor.prompts import build_messages
from extractor.schema import ExtractionOutput, outline, wire_schema
from extractor.turn import Turn


def turn(**kwargs: object) -> Turn:
    base: dict[str, object] = {
        "request_id": "r1",
        "user_id": "u1",
        "scopes": ["project:billing"],
        "model": "small",
        "user_message": "We use the raw Mongo driver.",
        "assistant_message": "Noted.",
    }
    base.update(kwargs)
    return Turn.model_validate(base)


def test_the_prompt_carries_scope_known_beliefs_and_the_turn() -> None:
    known = Belief(
        id="b-1",
        user_id="u1",
        canonical_name="database_driver",
        content="Uses Mongoose.",
        aliases=["odm"],
        scope=["project:billing"],
    )
    messages = build_messages(turn(), [known], ["project:billing", "user:universal"])
    # The rules, one worked example, one turn of small talk with its empty result, the turn.
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert "own words" in messages[0]["content"]
    body = messages[-1]["content"]
    assert "project:billing, user:universal" in body
    assert '"id": "b-1"' in body and '"canonical_name": "database_driver"' in body
    assert "We use the raw Mongo driver." in body and "Noted." in body


def test_injected_memory_and_secrets_never_reach_the_prompt() -> None:
    user = (
        "Deploy with key sk-abcdefghijklmnopqrstuvwx please.\n\n"
        '<tenure-memory kind="relevant">\n- old_fact: Uses Redis\n</tenure-memory>'
    )
    t = turn(
        user_message=user,
        tool_calls=[
            {"function": {"arguments": '{"token": "ghp_abcdefghijklmnopqrstuvwxyz012345"}'}}
        ],
    )
    body = build_messages(t, [], ["project:billing"])[-1]["content"]
    assert "sk-abcdefghijklmnopqrstuvwx" not in body
    assert "ghp_abcdefghijklmnopqrstuvwxyz012345" not in body
    assert "Uses Redis" not in body and "tenure-memory" not in body
    assert "[REDACTED]" in body


def test_long_pasted_code_is_folded() -> None:
    code = "```python\n" + "x = 1\n" * 60 + "```"
    body = build_messages(turn(user_message=f"Look:\n{code}"), [], [])[-1]["content"]
    assert "x = 1" not in body and "code block of 60 lines omitted" in body


def test_the_examples_are_complete_and_the_small_talk_one_is_empty() -> None:
    messages = build_messages(turn(), [], ["project:billing"])
    worked = ExtractionOutput.model_validate_json(messages[2]["content"])
    assert worked.skipped == [] and len(worked.new_beliefs) == 1
    assert all(b.why_it_matters and b.aliases for b in worked.new_beliefs)
    assert any(b.rejected_alternatives for b in worked.new_beliefs)
    small_talk = ExtractionOutput.model_validate_json(messages[4]["content"])
    assert small_talk == ExtractionOutput()


def test_no_fragment_of_a_subject_a_user_might_have_is_there_to_copy() -> None:
    # A small model copied the rules' inline examples into real beliefs; none are left in the
    # rules or in the schema's descriptions, and the worked example is about cooking.
    rules = build_messages(turn(), [], [])[0]["content"]
    schema = json.dumps(wire_schema(ExtractionOutput))
    for fragment in ("database_driver", "TypeScript", "mongoose", "k8s", "e.g."):
        assert fragment.lower() not in rules.lower(), fragment
        assert fragment.lower() not in schema.lower(), fragment


def test_a_secret_the_user_named_is_masked_where_the_reply_repeats_it() -> None:
    t = turn(
        user_message="the vpn password: Kx9-Hunter-7q",
        assistant_message="Noted: I will type Kx9-Hunter-7q when the VPN asks.",
        tool_calls=[{"function": {"arguments": '{"cmd": "vpn up Kx9-Hunter-7q"}'}}],
    )
    body = build_messages(t, [], ["project:billing"])[-1]["content"]
    assert "Kx9-Hunter-7q" not in body and body.count("[REDACTED]") == 3


def test_every_call_shares_the_same_start_so_provider_caches_apply() -> None:
    # Rules, schema and examples come first and never vary with the turn, its scope or the
    # known beliefs: providers cache a repeated prefix and charge it at a fraction.
    known = Belief(
        id="b-1", user_id="u1", canonical_name="x", content="Uses Y.", scope=["domain:x"]
    )
    one = build_messages(turn(), [], ["project:billing"])
    other = build_messages(turn(user_message="Something else entirely."), [known], ["domain:x"])
    assert one[:-1] == other[:-1] and one[-1] != other[-1]


def test_the_outline_is_a_third_of_the_json_schema() -> None:
    schema = wire_schema(ExtractionOutput)
    text = outline(schema)
    count = token_counter()
    assert count(text) * 2 < count(json.dumps(schema, separators=(",", ":")))
    for name in ("new_beliefs", "rejected_alternatives", "belief_updates", "quote"):
        assert f"{name}:" in text
    assert "reinforced|contradicted|superseded|enriched" in text
