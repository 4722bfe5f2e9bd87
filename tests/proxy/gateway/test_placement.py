"""Where memory goes in OpenAI and Anthropic requests (pure functions)."""

from __future__ import annotations

import copy
from typing import Any

from proxy.gateway.protocols import anthropic_messages, chat_completions

SYS = '<tenure-memory kind="standing">S</tenure-memory>'
REL = '<tenure-memory kind="relevant">R</tenure-memory>'


def test_openai_string_contents() -> None:
    body: dict[str, Any] = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "second", "name": "al"},
        ],
        "temperature": 0.2,
    }
    original = copy.deepcopy(body)
    out = chat_completions.place_openai(body, SYS, REL)
    assert body == original  # the caller's request is not mutated
    assert out["messages"][0]["content"] == f"Be brief.\n\n{SYS}"
    assert out["messages"][1:3] == original["messages"][1:3]
    assert out["messages"][3] == {"role": "user", "content": f"second\n\n{REL}", "name": "al"}
    assert out["temperature"] == 0.2


def test_openai_adds_system_and_appends_parts() -> None:
    parts = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "u"}}]
    body: dict[str, Any] = {"messages": [{"role": "user", "content": parts}]}
    out = chat_completions.place_openai(body, SYS, REL)
    assert out["messages"][0] == {"role": "system", "content": SYS}
    assert out["messages"][1]["content"] == [*parts, {"type": "text", "text": REL}]


def test_openai_tool_result_turn_gets_only_the_system_block() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "tool_calls": [{"id": "c"}]},
        {"role": "tool", "tool_call_id": "c", "content": "r"},
    ]
    assert chat_completions.openai_ends_with_tool_result(messages)
    out = chat_completions.place_openai({"messages": messages}, SYS, REL)
    assert out["messages"][1:] == messages
    assert chat_completions.openai_last_user_text(messages) == "q"


def test_empty_blocks_change_nothing() -> None:
    body: dict[str, Any] = {"messages": [{"role": "user", "content": "q"}]}
    assert chat_completions.place_openai(body, "", "") == body
    assert anthropic_messages.place_anthropic(body, "", "") == body


def test_anthropic_system_string_blocks_and_absent() -> None:
    messages = [{"role": "user", "content": "q"}]
    out = anthropic_messages.place_anthropic({"system": "S0", "messages": messages}, SYS, REL)
    assert out["system"] == f"S0\n\n{SYS}"
    assert out["messages"] == [{"role": "user", "content": f"q\n\n{REL}"}]
    blocks = [{"type": "text", "text": "S0", "cache_control": {"type": "ephemeral"}}]
    out = anthropic_messages.place_anthropic({"system": blocks, "messages": messages}, SYS, "")
    assert out["system"] == [*blocks, {"type": "text", "text": SYS}]
    assert anthropic_messages.place_anthropic({"messages": messages}, SYS, "")["system"] == SYS


def test_anthropic_tool_result_turn() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "1"}]},
    ]
    assert anthropic_messages.anthropic_ends_with_tool_result(messages)
    assert anthropic_messages.anthropic_last_user_text(messages) == "q"
    out = anthropic_messages.place_anthropic({"messages": messages}, SYS, REL)
    assert out["messages"] == messages and out["system"] == SYS
