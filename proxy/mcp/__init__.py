"""Memory tools for agents: the Model Context Protocol server at `/mcp` and `tenure mcp`
(stdio), on the official SDK."""

from __future__ import annotations

__all__: list[str] = []
