"""Tool loops and a subagent run as the real clients sent them (`check_memory --record`):
Claude Code's `Read` (its history ending in a mid-conversation `system` message), Codex's
`exec` (a custom tool offered in an `additional_tools` input item) and an Agents SDK function
tool; a Claude Code subagent marked by its header and its system text."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.fakes.upstream import Chat, FakeUpstream
from tests.proxy.conftest import Gateway
from tests.proxy.gateway.gateway_reads import corpus, pending_turns
from tests.proxy.gateway.test_clients import BELIEFS, USER, provider_copies, recorded, replay
from tests.real_clients.model import relevant_blocks

CORPUS = corpus(USER)
FINAL = "Read it; here is the config."


def tool_call(loop_request: dict[str, Any]) -> dict[str, Any]:
    """The call the model made, as the client sent it back in the loop request."""
    body = loop_request["body"]
    for item in body.get("input") or []:
        if item.get("type") == "custom_tool_call":
            return {"id": item["call_id"], "name": item["name"], "input": item["input"]}
        if item.get("type") == "function_call":
            return {"id": item["call_id"], "name": item["name"], "arguments": item["arguments"]}
    for message in body.get("messages") or []:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_use":
                arguments = json.dumps(block["input"])
                return {"id": block["id"], "name": block["name"], "arguments": arguments}
    raise AssertionError("the loop request carries no tool call")


@pytest.mark.parametrize("client", ["claude-code", "codex", "openai-agents"])
def test_a_recorded_tool_loop_carries_one_block_byte_for_byte_and_makes_one_job(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream, client: str
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, BELIEFS[client]])
    first, loop = recorded(f"{client}-tool-loop")
    upstream.queue(Chat(content="", tool_calls=[tool_call(loop)]), Chat(content=FINAL))
    replay(gw, first)
    replay(gw, loop)
    sent = provider_copies(upstream, first["path"])
    assert len(sent) == 2
    blocks = [relevant_blocks(r) for r in sent]
    assert blocks[0] == blocks[1] and len(blocks[0]) == 1
    assert BELIEFS[client].content in blocks[0][0]
    gw.settle()
    [turn] = pending_turns(gw)
    assert turn["user_message"].endswith("Read app.py first, then answer.")
    # The reply calling the tool is not the final answer (Codex's `exec` is a custom tool call).
    assert turn["assistant_message"] == FINAL
    assert [c["function"]["name"] for c in turn["tool_calls"]] == [tool_call(loop)["name"]]


def test_a_recorded_claude_code_subagent_receives_memory_and_makes_no_job(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, BELIEFS["claude-code"]])
    title, parent, subagent, back = recorded("claude-code-subagent")
    assert "x-claude-code-agent-id" in subagent["headers"]
    replay(gw, title)
    upstream.queue(Chat(content="", tool_calls=[tool_call(back)]))
    replay(gw, parent)
    upstream.queue(Chat(content="The project holds app.py."))
    replay(gw, subagent)
    upstream.queue(Chat(content="It holds app.py."))
    replay(gw, back)
    gw.settle()
    [turn] = pending_turns(gw)  # the typed message's, written with the parent's answer
    assert turn["user_message"] == "Survey this project for me with a subagent."
    assert "pulumi" not in json.dumps(pending_turns(gw)).casefold()
