"""Text a model wrote, not the user: it may receive memory but is never the user's words.

Agents put model-written text where a person's words usually go. A subagent's request carries
the parent model's prompt as its user message (Claude Code marks it with the
`x-claude-code-agent-id` header and `cc_is_subagent=true` in its system text; Codex with
`x-openai-subagent`); a harness reports on its subagents in a user message (Codex's
`<subagent_notification>`, a harness block in `harness.py`); a structured-output library asks
the model again after a validation error ("Correct your JSON ONLY RESPONSE…"). Extracting such
text stores the model's own paraphrase as something the user said.

`SUBAGENT_HEADERS`, `SUBAGENT_SYSTEM_MARKERS` and `MODEL_PROMPTS` are the lists to extend.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from proxy.gateway.harness import strip_harness

# A request whose header is present is a subagent's: its user message is the parent's prompt.
SUBAGENT_HEADERS: tuple[str, ...] = ("x-claude-code-agent-id", "x-openai-subagent")

# Found anywhere in a system prompt part (Claude Code's billing line: `cc_is_subagent=true;`).
SUBAGENT_SYSTEM_MARKERS: tuple[str, ...] = (r"\bcc_is_subagent=true\b",)

# A user message that opens with one of these was written by a program for the model.
MODEL_PROMPTS: tuple[str, ...] = (
    r"Correct your JSON ONLY RESPONSE",  # instructor: JSON modes, after a validation error
    r"Recall the function correctly, fix the errors",  # instructor: tool modes
    r"Validation Errors? found:",  # instructor: the error report that opens its re-ask
)

_SUBAGENT_SYSTEM = re.compile("|".join(f"(?:{m})" for m in SUBAGENT_SYSTEM_MARKERS))
_MODEL_PROMPT = re.compile("|".join(f"(?:{m})" for m in MODEL_PROMPTS), re.IGNORECASE)
_LEAD = 200  # a re-ask opens its message; look no further


_HEADER_NAMES = frozenset(name.encode() for name in SUBAGENT_HEADERS)


def subagent_marker(
    headers: Iterable[tuple[bytes, bytes]], system_texts: Iterable[str]
) -> str | None:
    """What marks the request as a subagent's (a header's name, or the system marker), or
    None when a person's agent sent it. `headers`: the ASGI scope's, names lower-cased."""
    for name, value in headers:
        if name in _HEADER_NAMES and value.strip():
            return name.decode()
    for text in system_texts:
        if (found := _SUBAGENT_SYSTEM.search(text)) is not None:
            return found.group(0)
    return None


def typed_words(text: str) -> str:
    """The words a person typed in a user message's text: "" when the message is only
    harness blocks or a prompt a program wrote for the model."""
    words = strip_harness(text).strip()
    if not words or _MODEL_PROMPT.match(words[:_LEAD]):
        return ""
    return words
