"""Prompt caching: the stable start of a prompt (rules, schema, worked examples) marked so a
provider reuses it instead of charging it again on every call.

OpenAI caches a repeated prefix of 1,024 tokens or more on its own; Anthropic caches only up to
a block marked with `cache_control`. The marker goes on the system message and on the last
message before the turn, the end of the prefix every call shares.
"""

from __future__ import annotations

from typing import Any

EPHEMERAL = {"type": "ephemeral"}
# LiteLLM providers that take Anthropic's `cache_control` marker on content blocks.
MARKED_PROVIDERS = ("anthropic/", "bedrock/anthropic", "vertex_ai/claude")


def cache_marked(messages: list[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    """The messages with the end of their stable prefix marked for providers that need it;
    unchanged for every other model (a list-form content would confuse local servers)."""
    if not model.startswith(MARKED_PROVIDERS):
        return messages
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    turn_at = users[-1] if users else len(messages)
    if len(users) > 1 and users[-1] == users[-2] + 1:
        turn_at = users[-2]  # a re-ask follows the turn
    marks = {i for i, m in enumerate(messages) if m.get("role") == "system"}
    if turn_at > 0 and messages[turn_at - 1].get("role") != "system":
        marks.add(turn_at - 1)
    return [_marked(m) if i in marks else m for i, m in enumerate(messages)]


def _marked(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, str) or not content:
        return message
    block = {"type": "text", "text": content, "cache_control": EPHEMERAL}
    return {**message, "content": [block]}
