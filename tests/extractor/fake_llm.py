"""A fake at the LLM boundary: scripted replies in order, every call recorded."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from extractor.canary import CANARY_USER
from extractor.llm import ModelCall, ModelReply
from extractor.modes import ModeBook
from tests.fakes.upstream import CANARY_ANSWER

Scripted = str | dict[str, Any] | ModelReply | Exception


class FakeChatModel:
    """Implements `ChatModel`; a reply that is an Exception is raised instead of returned, a
    `ModelReply` is returned as it is (finish reason, usage), text is a plain stop."""

    def __init__(self, replies: Sequence[Scripted] = ()) -> None:
        self.replies: list[Scripted] = list(replies)
        self.calls: list[dict[str, Any]] = []
        self.default: Scripted | None = None
        self.gate: asyncio.Event | None = None
        self.modes = ModeBook()

    def push(self, *replies: Scripted) -> None:
        self.replies.extend(replies)

    async def complete(self, call: ModelCall) -> ModelReply:
        if any(CANARY_USER in str(m.get("content")) for m in call.messages):
            # A model that passes the canary; the script is for the jobs' own calls.
            return ModelReply(text=json.dumps(CANARY_ANSWER), finish_reason="stop")
        self.calls.append(
            {
                "messages": [dict(m) for m in call.messages],
                "response_format": call.response_format,
                "model": call.model,
                "max_tokens": call.max_tokens,
                "temperature": call.temperature,
                "tools": call.tools,
            }
        )
        if self.gate is not None:
            await self.gate.wait()
        if self.replies:
            reply = self.replies.pop(0)
        elif self.default is not None:
            reply = self.default
        else:
            raise AssertionError("FakeChatModel ran out of scripted replies")
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, ModelReply):
            return reply
        text = reply if isinstance(reply, str) else json.dumps(reply)
        return ModelReply(text=text, finish_reason="stop")


def extraction(**kwargs: Any) -> dict[str, Any]:
    """An extraction reply with empty lists for whatever is not given."""
    out: dict[str, Any] = {
        "new_beliefs": [],
        "belief_updates": [],
        "entity_updates": [],
        "resolved_open_questions": [],
    }
    out.update(kwargs)
    return out


def new_belief(name: str, content: str, **kwargs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "decision",
        "canonical_name": name,
        "content": content,
        "why_it_matters": f"Respect {name} in every answer.",
        "aliases": [],
        "rejected_alternatives": [],
        "scope": [],
        "confidence": 0.9,
        "epistemic_status": "active",
        "memory_class": None,
        "participants": [],
        "resolves_open_question": None,
    }
    out.update(kwargs)
    return out


def update(change: str, **kwargs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "belief_id": None,
        "canonical_name": None,
        "change": change,
        "new_content": None,
        "new_canonical_name": None,
        "reason": None,
    }
    out.update(kwargs)
    return out
