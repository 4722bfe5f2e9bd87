"""The request path to the provider: routing, body checks, identity, chat commands, memory
placement, forwarding over the pooled client, translation, synthetic replies, the turn capture
and the background writer."""

from __future__ import annotations

__all__: list[str] = []
