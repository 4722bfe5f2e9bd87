"""The gateway: OpenAI/Anthropic-compatible proxy, JSON API, CLI and settings."""

from __future__ import annotations

from typing import Any

from proxy.settings import Settings, SettingsError

__all__ = ["Settings", "SettingsError", "create_app"]


def __getattr__(name: str) -> Any:
    # The app pulls in starlette and uvicorn; CLI commands that only need settings skip that.
    if name == "create_app":
        from proxy.app import create_app

        return create_app
    raise AttributeError(f"module 'proxy' has no attribute {name!r}")
