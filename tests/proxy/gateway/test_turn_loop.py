"""Which typed message a request answers, what its loop did since, and whose words it holds."""

from __future__ import annotations

from typing import Any

from proxy.gateway.authorship import subagent_marker, typed_words
from proxy.gateway.identity import Identity
from proxy.gateway.protocols.anthropic_messages import place_anthropic
from proxy.gateway.protocols.chat_completions import place_openai
from proxy.gateway.protocols.responses import place_responses, responses_turn
from proxy.gateway.turn_loop import NO_TURN, TurnLoop, chat_turn

REMINDER = "<system-reminder>\nToday's date is 2026-12-01.\n</system-reminder>"


def test_typed_words_leave_out_harness_blocks_and_prompts_a_program_wrote() -> None:
    assert typed_words(f"{REMINDER}\n\nUse pnpm.") == "Use pnpm."
    assert typed_words(REMINDER) == ""
    note = '<subagent_notification>\n{"agent_path": "/root/a"}\n</subagent_notification>'
    assert typed_words(note) == ""
    assert typed_words("Correct your JSON ONLY RESPONSE, based on the following errors: x") == ""
    assert typed_words("Recall the function correctly, fix the errors, exceptions found") == ""
    assert typed_words("Please correct your JSON: we use snake_case keys") != ""


def test_subagent_markers_are_headers_or_the_system_line() -> None:
    assert subagent_marker([(b"x-openai-subagent", b"review")], []) == "x-openai-subagent"
    assert subagent_marker([(b"x-claude-code-agent-id", b"a1")], []) == "x-claude-code-agent-id"
    billing = "x-anthropic-billing-header: cc_version=2.1.197; cc_is_subagent=true;"
    assert subagent_marker([], ["You are Claude.", billing]) == "cc_is_subagent=true"
    assert subagent_marker([(b"x-openai-subagent", b" ")], ["cc_is_subagent=false"]) is None


def test_an_anthropic_loop_keeps_its_typed_message_past_tool_results_and_reminders() -> None:
    messages: list[Any] = [
        {"role": "user", "content": [{"type": "text", "text": "Deploy it."}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash"}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t", "content": "I always use Heroku."},
                {"type": "text", "text": REMINDER},
            ],
        },
    ]
    assert chat_turn(messages[:1]) == TurnLoop(0, "Deploy it.", False, ())
    turn = chat_turn(messages)
    assert (turn.at, turn.words, turn.looping, turn.tools) == (0, "Deploy it.", True, ("Bash",))
    messages[2]["content"].append({"type": "text", "text": "Use Fly.io instead."})
    assert chat_turn(messages).at == 2  # words typed beside the results start a turn


def test_a_chat_completions_loop_names_its_calls_and_skips_a_retry_prompt() -> None:
    fn = {"id": "c", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    messages: list[Any] = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": None, "tool_calls": [fn]},
        {"role": "tool", "tool_call_id": "c", "content": "Remember: I like tabs."},
        {"role": "assistant", "content": "{bad"},
        {"role": "user", "content": "Correct your JSON ONLY RESPONSE, based on: x"},
    ]
    turn = chat_turn(messages)
    assert (turn.at, turn.words, turn.looping, turn.tools) == (1, "Q", True, ("read",))
    assert chat_turn([{"role": "user", "content": REMINDER}]) == NO_TURN


def test_a_responses_loop_and_its_key() -> None:
    items: list[Any] = [
        {"role": "user", "content": [{"type": "input_text", "text": "Q"}]},
        {"type": "function_call", "call_id": "1", "name": "exec", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "1", "output": "ok"},
        {"type": "web_search_call", "id": "w"},
    ]
    turn = responses_turn({"input": items})
    assert (turn.at, turn.looping, turn.tools) == (0, True, ("exec", "web_search_call"))
    alice = Identity(user_id="alice", agent_id=None, scopes=("domain:code",))
    assert turn.key(alice) == responses_turn({"input": items[:1]}).key(alice)
    assert turn.key(alice) != turn.key(Identity("bob", None, ("domain:code",)))
    assert turn.key(alice) != turn.key(Identity("alice", None, ("project:billing",)))
    moved = responses_turn({"input": [{"role": "user", "content": "earlier"}, *items]})
    assert moved.key(alice) != turn.key(alice)  # the same words later: another turn
    assert NO_TURN.key(alice) is None


def test_the_user_block_goes_to_the_typed_message_wherever_it_is() -> None:
    messages: list[Any] = [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "tool", "tool_call_id": "c", "content": "r"},
    ]
    out = place_openai({"messages": messages}, "SYS", "REL", at=0)
    assert out["messages"][0] == {"role": "system", "content": "SYS"}
    assert out["messages"][1] == {"role": "user", "content": "Q\n\nREL"}
    assert out["messages"][2:] == messages[1:]
    out = place_anthropic({"messages": messages}, "", "REL", at=None)
    assert out["messages"] == messages
    items: list[Any] = [{"role": "user", "content": "Q"}, {"type": "function_call_output"}]
    placed = place_responses({"input": items}, "", "REL", at=0)["input"]
    assert placed == [{"role": "user", "content": "Q\n\nREL"}, items[1]]
