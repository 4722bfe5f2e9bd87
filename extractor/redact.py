"""Secret redaction: applied to the turn before any prompt and to everything extraction stores."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

REDACTED = "[REDACTED]"

_KEY_NAMES = (
    r"[a-z0-9_\-]*(?:token|secret|api[_\- ]?key|apikey|access[_\- ]?key|auth[_\- ]?key"
    r"|client[_\- ]?secret|private[_\- ]?key)[a-z0-9_\-]*"
)

# (pattern, value must mix letters and digits). A pattern with a group "secret" replaces only
# that group; otherwise the whole match. After words like "token" a long value counts as a secret
# only if it mixes letters and digits: "token_budget_configuration" is prose, "a1b2c3..." is not.
_RULES: tuple[tuple[re.Pattern[str], bool], ...] = (
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)"
        ),
        False,
    ),
    (re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{8,}"), False),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"), False),
    (re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"), False),
    (re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b"), False),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), False),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"), False),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), False),
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), False),
    (re.compile(r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)"), False),
    (re.compile(r"(?i)\bbasic\s+(?P<secret>[A-Za-z0-9+/]{12,}={0,2})"), False),
    (
        re.compile(
            r"(?i)\b(?:password|passwd|passphrase|pwd)\b[\"']?\s*(?:[=:]|\bis\b)\s*"
            r"(?P<secret>\"[^\"\n]*\"|'[^'\n]*'|[^\s,;]+)"
        ),
        False,
    ),
    (
        re.compile(
            r"(?i)\b" + _KEY_NAMES + r"\b[\"']?\s*(?:[=:]|\bis\b)?\s*[\"']?"
            r"(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)"
        ),
        True,
    ),
    (re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:(?P<secret>[^\s@/]+)@"), False),
)


def _replacer(mixed: bool) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        if "secret" not in match.re.groupindex:
            return REDACTED
        value = match.group("secret")
        if value.startswith(REDACTED) or (mixed and not _mixes(value)):
            return match.group(0)
        start, end = (i - match.start() for i in match.span("secret"))
        text = match.group(0)
        return text[:start] + REDACTED + text[end:]

    return replace


def _mixes(value: str) -> bool:
    return bool(re.search(r"[0-9]", value)) and bool(re.search(r"[A-Za-z]", value))


# Substrings (lower-cased) each rule's match must contain, in `_RULES` order: a rule runs only
# on text that has one, so ordinary prose costs a few substring checks instead of 14 regexes.
_TRIGGERS: tuple[tuple[str, ...], ...] = (
    ("private key",),
    ("sk-ant-",),
    ("sk-",),
    ("akia", "asia", "agpa", "aida", "aroa"),
    ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ("github_pat_",),
    ("xox",),
    ("aiza",),
    ("eyj",),
    ("bearer",),
    ("basic",),
    ("pass", "pwd"),
    ("token", "secret", "key"),
    ("://",),
)

_COMPILED = tuple(
    (pattern, _replacer(mixed), triggers)
    for (pattern, mixed), triggers in zip(_RULES, _TRIGGERS, strict=True)
)


# Any trigger at all: most strings of a turn (keys, roles, prose) have none and cost one scan.
_ANY_TRIGGER = re.compile("|".join(re.escape(t) for triggers in _TRIGGERS for t in triggers))


def redact(text: str) -> str:
    """Replace every secret-looking span in `text` with `[REDACTED]`."""
    lower = text.lower()
    if _ANY_TRIGGER.search(lower) is None:
        return text
    for pattern, replace, triggers in _COMPILED:
        if any(t in lower for t in triggers):
            text = pattern.sub(replace, text)
            lower = text.lower()
    return text


def redact_value(value: Any, _redact: Callable[[str], str] = redact) -> Any:
    """`redact` applied to every string inside nested dicts and lists (keys included)."""
    if isinstance(value, str):
        return _redact(value)
    if isinstance(value, dict):
        return {_redact(str(k)): redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value
