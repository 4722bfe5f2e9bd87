"""The user's own words in a turn: agent harness blocks dropped, the end of long text kept.

Agents wrap the text a person types in blocks of their own: Claude Code puts several kilobytes
of `<system-reminder>` parts before the prompt, Codex sends `<environment_context>` and
`<user_instructions>` messages, Cline and Roo Code append `<environment_details>`, slash
commands arrive as `<command-name>` … `<local-command-stdout>`, and Claude Code and Codex
report on their subagents in `<task-notification>` and `<subagent_notification>`. Searching or
extracting that text buries the user's words (the query is clamped to its first 1,000
characters) and feeds the extractor boilerplate. A block is dropped whole, tags and text; what
is left, when still long, is cut from the front, because people type at the end.

`HARNESS_TAGS` is the list to extend: a name matches that tag, a name ending in `-` or `_`
matches every tag it begins (`command-` covers `command-name`, `command-args` …).
"""

from __future__ import annotations

import re

HARNESS_TAGS: tuple[str, ...] = (
    "system-reminder",
    "environment_details",
    "environment_context",
    "user_instructions",
    "user-prompt-submit-hook",
    "command-",
    "local-command-",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "ide_",
    "turn_aborted",
    "task-notification",
    "subagent_notification",  # Codex: a subagent's status, reported to the parent model
)

# What the search sees: the query builder clamps a cleaned query to 1,000 characters.
QUERY_CHARS = 1000


def _pattern(tags: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(
        re.escape(tag) + r"[\w:.-]*" if tag.endswith(("-", "_")) else re.escape(tag) + r"(?![\w-])"
        for tag in tags
    )
    # A block: the opening tag (attributes allowed), anything, the same tag closed.
    return re.compile(rf"<(?P<tag>{names})(?:\s[^<>]*)?>.*?</(?P=tag)\s*>", re.DOTALL)


_BLOCK = _pattern(HARNESS_TAGS)
_BLANK_LINES = re.compile(r"\n\s*\n(\s*\n)+")
_SPACE = re.compile(r"\s+")


def strip_harness(text: str) -> str:
    """`text` without harness blocks; text without a `<` comes back as it is."""
    if "<" not in text:
        return text
    stripped = _BLOCK.sub("", text)
    if stripped is text or stripped == text:
        return text
    return _BLANK_LINES.sub("\n\n", stripped).strip()


def keep_end(text: str, limit: int) -> str:
    """At most `limit` characters from the end of `text`, starting at a word."""
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    space = _SPACE.search(tail)
    return tail[space.end() :] if space is not None and space.start() < limit // 4 else tail


def user_words(text: str) -> str:
    """The search query of a turn: the harness dropped, the end kept."""
    return keep_end(strip_harness(text), QUERY_CHARS)
