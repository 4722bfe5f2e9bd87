"""The evaluation harness, scored against scripted models whose answers are known."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from beliefs.errors import BeliefError
from extractor.config import ExtractionConfig
from extractor.evaluation import Conversation, ModelScore, evaluate, load_conversations
from extractor.llm import LiteLLMChatModel
from tests.fakes.local_model import Behaviour, LocalModel, SeenRequest
from tests.fakes.reference_model import reference_brain

SHIPPED = load_conversations()


def score(conversations: list[Conversation], brain: Callable[[SeenRequest], Any]) -> ModelScore:
    with LocalModel(Behaviour(), brain=brain) as server:
        llm = LiteLLMChatModel(api_base=server.url, timeout=30)
        config = ExtractionConfig(
            model="openai/reference", max_attempts=1, breaker_threshold=1_000_000
        )

        async def go() -> ModelScore:
            try:
                return await evaluate(llm, config, conversations)
            finally:
                await llm.aclose()

        return asyncio.run(go())


def test_the_shipped_set_covers_the_people_and_kinds_of_turn_it_promises() -> None:
    assert len(SHIPPED) >= 25
    personas = Counter(c.persona for c in SHIPPED)
    assert {"developer", "writer", "researcher"} <= set(personas)
    kinds = {k for c in SHIPPED for k in c.kinds}
    for kind in ("correction", "rejection", "chit-chat", "mixed languages"):
        assert kind in kinds, kind
    assert sum(c.chit_chat for c in SHIPPED) >= 4
    assert all(c.probes or c.chit_chat or "open question" in c.kinds for c in SHIPPED)


def test_a_model_that_answers_the_gold_scores_full_marks_on_the_shipped_set() -> None:
    # Also proves every probe of the set can be met by retrieval over the gold beliefs.
    result = score(SHIPPED, reference_brain(SHIPPED))
    missed = [f"{d.id}: {d.missed}" for d in result.details if d.missed]
    assert missed == []
    assert result.facts_found == result.facts_expected > 25
    assert result.rejected_captured == result.rejected_expected >= 10
    assert result.supersessions_detected == result.supersessions_expected == 4
    assert result.chit_chat_beliefs == 0 and result.copied_from_example == 0
    assert result.jobs_failed == 0 and result.jobs == sum(len(c.turns) for c in SHIPPED)
    assert result.modes == {"json_schema": result.jobs}
    assert result.prompt_tokens_per_job > 0 and result.calls_per_job == 1


def test_a_worse_model_is_scored_exactly_as_scripted() -> None:
    chosen = {
        "dev-mongo-driver",  # answers nothing: 2 probes and 1 rejection missed
        "dev-redis-to-valkey",  # misses the correction: 1 probe and 1 supersession missed
        "dev-chit-chat-coffee",  # a belief from small talk
        "research-stats-r",  # chats instead of answering: a failed job
        "writer-no-em-dashes",  # copies the worked example
        "research-citation-style",  # right
    }
    subset = [c for c in SHIPPED if c.id in chosen]

    def spoil(conversation_id: str, answer: dict[str, Any]) -> dict[str, Any] | None:
        if conversation_id == "dev-mongo-driver":
            answer["new_beliefs"] = []
        if conversation_id == "dev-redis-to-valkey":
            answer["belief_updates"] = []
        if conversation_id == "dev-chit-chat-coffee":
            answer["new_beliefs"] = [
                {
                    "type": "preference",
                    "canonical_name": "coffee",
                    "content": "Drinks coffee.",
                    "confidence": 0.9,
                }
            ]
        if conversation_id == "research-stats-r":
            return None
        if conversation_id == "writer-no-em-dashes":
            answer["new_beliefs"][0]["why_it_matters"] = "Give quantities in millilitres."
        return answer

    result = score(subset, reference_brain(subset, spoil))
    by_id = {d.id: d for d in result.details}
    assert (by_id["dev-mongo-driver"].facts_found, by_id["dev-mongo-driver"].facts_expected) == (
        0,
        2,
    )
    assert by_id["dev-redis-to-valkey"].supersessions_detected == 0
    assert (result.facts_found, result.facts_expected) == (3, 7)
    assert (result.rejected_captured, result.rejected_expected) == (2, 4)
    assert (result.supersessions_detected, result.supersessions_expected) == (0, 1)
    assert result.chit_chat_beliefs == 1 and result.copied_from_example == 1
    assert result.jobs == 7 and result.jobs_failed == 1
    assert result.failures == {"ExtractionOutputInvalid": 1}


def test_a_bad_conversation_file_is_refused_by_name(tmp_path: Any) -> None:
    bad = tmp_path / "set.json"
    bad.write_text('{"conversations": [{"id": "x", "persona": "dev", "turns": []}]}')
    with pytest.raises(BeliefError, match=r"conversations\.0\.turns"):
        load_conversations(bad)
    with pytest.raises(BeliefError, match="does not exist"):
        load_conversations(tmp_path / "missing.json")
