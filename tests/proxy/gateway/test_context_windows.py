"""The memory token budget: a share of the model's context window, with a floor."""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy.gateway.context_windows import DEFAULT_WINDOW, context_window, memory_budget
from proxy.settings import Settings, SettingsError


def test_windows_and_budget() -> None:
    assert context_window("gpt-4o-mini") == 128_000
    assert context_window("openai/gpt-4.1-mini") == 1_047_576
    assert context_window("claude-sonnet-4") == 200_000
    assert context_window("some-local-model") == DEFAULT_WINDOW
    assert memory_budget("gpt-4", floor_tokens=1024, pct=8) == 1024
    assert memory_budget("claude-3", floor_tokens=1024, pct=8) == 16_000


def test_model_route_key_is_read_from_its_variable(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[models."house"]\nlitellm_model = "anthropic/claude-sonnet-4"\napi_key_env = "HOUSE_KEY"\n'
    )
    settings = Settings.load(environ={"TENURE_HOME": str(tmp_path), "HOUSE_KEY": "k-1"})
    assert settings.models["house"].api_key == "k-1"
    assert "k-1" not in repr(settings)


def test_default_scopes_are_checked(tmp_path: Path) -> None:
    env = {"TENURE_HOME": str(tmp_path), "TENURE_DEFAULT_SCOPES": "Domain:Code, project:x"}
    assert Settings.load(environ=env).default_scopes == ("domain:code", "project:x")
    with pytest.raises(SettingsError, match="TENURE_DEFAULT_SCOPES"):
        Settings.load(environ={**env, "TENURE_DEFAULT_SCOPES": "galaxy"})
