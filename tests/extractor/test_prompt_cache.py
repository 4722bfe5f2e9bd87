"""Prompt caching: the stable prefix marked for Anthropic, cached tokens counted from usage."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from extractor.llm import LiteLLMChatModel
from extractor.prompt_cache import cache_marked
from extractor.prompts import build_messages
from extractor.schema import ExtractionOutput
from extractor.structured import complete_structured
from tests.extractor.conftest import make_turn
from tests.extractor.fake_llm import extraction
from tests.fakes.upstream import Chat, FakeUpstream

MESSAGES = build_messages(make_turn(), [], ["project:billing"])


def test_anthropic_gets_the_prefix_marked_and_its_cache_reads_are_counted() -> None:
    cached = {"cache_read_input_tokens": 900, "cache_creation_input_tokens": 0}
    with FakeUpstream() as upstream:
        upstream.queue(Chat(content=json.dumps(extraction()), usage=cached))
        llm = LiteLLMChatModel(api_base=upstream.url.removesuffix("/v1"), api_key="k", timeout=10)

        async def call() -> Any:
            try:
                return await complete_structured(
                    llm, MESSAGES, ExtractionOutput, model="anthropic/claude-3-5-haiku-20241022"
                )
            finally:
                await llm.aclose()

        result = asyncio.run(call())
        [request] = [r.json for r in upstream.requests if r.path.endswith("/messages")]
    assert result.value.new_beliefs == []
    assert (result.prompt_tokens, result.cached_tokens) == (912, 900)
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
