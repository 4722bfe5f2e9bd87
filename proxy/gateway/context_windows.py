"""Context window sizes of common models, for the memory token budget.

Matched by longest prefix of the model name (a `provider/` prefix is ignored); unknown models
get 128k tokens, the most common size today.
"""

from __future__ import annotations

from functools import lru_cache

DEFAULT_WINDOW = 128_000

_WINDOWS: dict[str, int] = {
    "gpt-3.5-turbo": 16_385,
    "gpt-4": 8_192,
    "gpt-4-32k": 32_768,
    "gpt-4-turbo": 128_000,
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4": 200_000,
    "claude": 200_000,
    "gemini-1.5": 1_048_576,
    "gemini-2": 1_048_576,
    "llama3": 8_192,
    "llama3.1": 128_000,
    "llama3.2": 128_000,
    "llama3.3": 128_000,
    "mistral": 32_768,
    "qwen2.5": 32_768,
    "deepseek": 128_000,
}
_BY_LENGTH = sorted(_WINDOWS, key=len, reverse=True)


@lru_cache(maxsize=1024)
def context_window(model: str) -> int:
    """Tokens of context of `model` (longest known prefix), else `DEFAULT_WINDOW`."""
    name = model.rsplit("/", 1)[-1].lower()
    for prefix in _BY_LENGTH:
        if name.startswith(prefix):
            return _WINDOWS[prefix]
    return DEFAULT_WINDOW


def memory_budget(model: str, *, floor_tokens: int, pct: float) -> int:
    """Tokens memory may use: a share of the model's window, never below the floor."""
    return max(floor_tokens, int(pct / 100 * context_window(model)))
