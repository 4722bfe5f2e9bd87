"""The model-call protocols, one adapter each: what the generic handler asks of a protocol
(`base.WireProtocol`) and the adapters for OpenAI Chat Completions, Anthropic Messages and the
Responses API."""

from __future__ import annotations

__all__: list[str] = []
