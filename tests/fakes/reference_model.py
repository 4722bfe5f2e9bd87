"""A scripted "model" for the evaluation harness: it answers each turn with the conversation
set's `gold`, so the harness's scores are known in advance.

`gold` operations: `{"new": {...}}` a new belief; `{"supersede": name, "content": ...}` replaces
the known belief of that name (with `why` and `rejected` when the correction rules one out);
`{"resolve": name, "quote": ...}` settles a known open question. Names are turned into the ids
the prompt lists under "Known beliefs", as a real model must.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any

from beliefs.context.tokens import token_counter
from extractor.config import ExtractionConfig
from extractor.eval_set import Conversation
from extractor.evaluation import ModelScore, evaluate
from extractor.llm import LiteLLMChatModel
from tests.fakes.local_model import Behaviour, LocalModel, SeenRequest, empty

Spoil = Callable[[str, dict[str, Any]], dict[str, Any] | None]


def reference_brain(
    conversations: Sequence[Conversation], spoil: Spoil | None = None
) -> Callable[[SeenRequest], dict[str, Any] | None]:
    """A brain answering the gold of the turn it is shown; `spoil(conversation_id, answer)`
    may change an answer (or return None to chat instead) to script a worse model."""
    turns = {
        _key(turn.user): (conversation.id, turn.gold)
        for conversation in conversations
        for turn in conversation.turns
    }

    def brain(seen: SeenRequest) -> dict[str, Any] | None:
        if not seen.knows_rules:
            return None
        found = turns.get(_key(seen.turn_text))
        if found is None:  # the worked examples of the prompt are not asked; anything else is
            raise AssertionError(f"the reference model has no gold for {seen.turn_text[:80]!r}")
        conversation_id, gold = found
        answer = _answer(gold, _known(seen))
        return spoil(conversation_id, answer) if spoil else answer

    return brain


def _key(text: str) -> str:
    # The prompt carries the turn redacted: compare on its opening words.
    return " ".join(text.split())[:40]


def _known(seen: SeenRequest) -> dict[str, str]:
    """canonical name -> id, from the "Known beliefs (JSON lines)" of the last message."""
    text = seen.turn_message
    out = {}
    for line in text.splitlines():
        if line.startswith('{"id"'):
            item = json.loads(line)
            out[item["canonical_name"]] = item["id"]
    return out


def _answer(gold: Sequence[dict[str, Any]], known: dict[str, str]) -> dict[str, Any]:
    out = empty()
    for op in gold:
        if "new" in op:
            b = op["new"]
            out["new_beliefs"].append(
                {
                    "type": b["type"],
                    "canonical_name": b["name"],
                    "content": b["content"],
                    "why_it_matters": b["why"],
                    "aliases": b.get("aliases", []),
                    "rejected_alternatives": b.get("rejected", []),
                    "scope": b.get("scope", []),
                    "confidence": 0.9,
                }
            )
        elif "supersede" in op:
            name = op["supersede"]
            out["belief_updates"].append(
                {
                    "belief_id": known.get(name),
                    "canonical_name": name,
                    "change": "superseded",
                    "new_content": op["content"],
                    "reason": op.get("reason"),
                    "why_it_matters": op.get("why"),
                    "rejected_alternatives": op.get("rejected", []),
                }
            )
        elif "resolve" in op:
            out["resolved_open_questions"].append(
                {"id": known.get(op["resolve"], op["resolve"]), "quote": op["quote"]}
            )
    return out


def score_brain(
    conversations: Sequence[Conversation],
    brain: Callable[[SeenRequest], dict[str, Any] | None],
    behaviour: Behaviour | None = None,
) -> ModelScore:
    """Run the evaluation against a stand-in server answering with `brain` (tokens counted
    with cl100k when the server plays a prompt cache)."""
    with LocalModel(behaviour or Behaviour(), brain=brain, count_tokens=token_counter()) as server:
        llm = LiteLLMChatModel(api_base=server.url, timeout=60)
        config = ExtractionConfig(
            model="openai/reference", max_attempts=1, breaker_threshold=1_000_000
        )

        async def go() -> ModelScore:
            try:
                return await evaluate(llm, config, conversations)
            finally:
                await llm.aclose()

        return asyncio.run(go())
