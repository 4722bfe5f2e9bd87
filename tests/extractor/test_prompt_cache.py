"""Prompt caching: the stable prefix marked for Anthropic, cached tokens counted from usage."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from extractor.llm import LiteLLMChatModel
from extractor.prompt_cache import cache_marked
from extractor.prompts import build_messages
from extractor.schema import ExtractionOutput
from extractor.structured import complete_structured
from tests.extractor.conftest import make_turn
from tests.extractor.fake_llm import extraction
from tests.fakes.json_provider import JsonProvider, serving

MESSAGES = build_messages(make_turn(), [], ["project:billing"])


class _Anthropic(JsonProvider):
    """Speaks Anthropic's messages API; reports 900 input tokens read from its cache."""

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = extraction()
        tools = body.get("tools") or []
        content: list[dict[str, Any]] = (
            [{"type": "tool_use", "id": "t1", "name": tools[0]["name"], "input": answer}]
            if tools
            else [{"type": "text", "text": json.dumps(answer)}]
        )
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": "tool_use" if tools else "end_turn",
            "usage": {
                "input_tokens": 120,
                "output_tokens": 20,
                "cache_read_input_tokens": 900,
                "cache_creation_input_tokens": 0,
            },
        }


@pytest.fixture
def anthropic() -> Iterator[str]:
    with serving(_Anthropic) as url:
        yield url


def test_anthropic_gets_the_prefix_marked_and_its_cache_reads_are_counted(anthropic: str) -> None:
    llm = LiteLLMChatModel(api_base=anthropic, api_key="sk-ant-test", timeout=10)

    async def call() -> Any:
        try:
            return await complete_structured(
                llm, MESSAGES, ExtractionOutput, model="anthropic/claude-3-5-haiku-20241022"
            )
        finally:
            await llm.aclose()

    result = asyncio.run(call())
    assert result.value.new_beliefs == []
    assert (result.prompt_tokens, result.cached_tokens) == (1020, 900)
    [request] = _Anthropic.received
    [system] = request["system"]
    assert system["cache_control"] == {"type": "ephemeral"}
    assert system["text"].startswith("You keep the long-term memory")
    # The last worked example closes the shared prefix; the turn itself is never marked.
    example, turn = request["messages"][-2], request["messages"][-1]
    assert example["role"] == "assistant"
    assert example["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in json.dumps(turn)


def test_other_models_get_the_messages_unchanged() -> None:
    assert cache_marked(MESSAGES, "openai/gpt-4o-mini") is MESSAGES
    assert cache_marked(MESSAGES, "ollama_chat/qwen2.5:3b") is MESSAGES


def test_a_re_ask_after_the_turn_does_not_move_the_mark() -> None:
    re_ask = [*MESSAGES, {"role": "user", "content": "Your reply could not be used."}]
    marked = cache_marked(re_ask, "anthropic/claude-x")
    assert isinstance(marked[-3]["content"], list)  # the last example, before the turn
    assert isinstance(marked[-2]["content"], str) and isinstance(marked[-1]["content"], str)
