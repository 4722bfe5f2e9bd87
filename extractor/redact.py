"""Secret redaction: applied to the turn before any prompt and to everything extraction stores."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

REDACTED = "[REDACTED]"

_KEY_NAMES = (
    r"[a-z0-9_\-]*(?:token|secret|api[_\- ]?key|apikey|access[_\- ]?key|auth[_\- ]?key"
    r"|client[_\- ]?secret|private[_\- ]?key)[a-z0-9_\-]*"
)

# (pattern, value must mix letters and digits, triggers). A pattern with a group "secret"
# replaces only that group; otherwise the whole match. After words like "token" a long value
# counts as a secret only if it mixes letters and digits: "token_budget_configuration" is
# prose, "a1b2c3..." is not. A rule runs only on text holding one of its triggers (lower-cased
# substrings), so ordinary prose costs a few substring checks instead of every regex.
_Rule = tuple[re.Pattern[str], bool, tuple[str, ...]]
_RULES: tuple[_Rule, ...] = (
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)"
        ),
        False,
        ("private key",),
    ),
    (re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{8,}"), False, ("sk-ant-",)),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"), False, ("sk-",)),
    # Stripe secret and restricted keys, webhook secrets
    (re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"), False, ("k_live_", "k_test_")),
    (re.compile(r"\bwhsec_[A-Za-z0-9]{16,}"), False, ("whsec_",)),
    (
        re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
        False,
        ("akia", "asia", "agpa", "aida", "aroa"),
    ),
    (
        re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b"),
        False,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), False, ("github_pat_",)),
    (
        re.compile(r"\bgl(?:pat|dt|ptt|rt|cbt|oas|soat|ft)-[A-Za-z0-9_\-]{20,}"),
        False,
        ("glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "gloas-", "glsoat-", "glft-"),
    ),
    (re.compile(r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"), False, ("xox",)),
    (re.compile(r"hooks\.slack\.com/services/[A-Za-z0-9/_\-]+"), False, ("hooks.slack.com",)),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), False, ("aiza",)),
    (re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"), False, ("sg.",)),
    (re.compile(r"\bnpm_[A-Za-z0-9]{30,}"), False, ("npm_",)),
    (re.compile(r"\bpypi-AgE[A-Za-z0-9_\-]{20,}"), False, ("pypi-age",)),
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}"), False, ("hf_",)),
    (re.compile(r"\bdo[por]_v1_[a-f0-9]{40,}"), False, ("_v1_",)),
    (
        re.compile(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
        False,
        ("shpat_", "shpca_", "shppa_", "shpss_"),
    ),
    (re.compile(r"\bdapi[a-f0-9]{32}"), False, ("dapi",)),
    (re.compile(r"\b[0-9]{8,10}:AA[A-Za-z0-9_\-]{30,}"), False, (":aa",)),
    (
        re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        False,
        ("eyj",),
    ),
    (re.compile(r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)"), False, ("bearer",)),
    (re.compile(r"(?i)\bbasic\s+(?P<secret>[A-Za-z0-9+/]{12,}={0,2})"), False, ("basic",)),
    (re.compile(r"(?i)\bAccountKey=(?P<secret>[^;\s]+)"), False, ("accountkey=",)),
    (
        re.compile(
            r"(?i)\b(?:password|passwd|passphrase|pwd)\b[\"']?\s*(?:[=:]|\bis\b)\s*"
            r"(?P<secret>\"[^\"\n]*\"|'[^'\n]*'|[^\s,;]+)"
        ),
        False,
        ("pass", "pwd"),
    ),
    (
        re.compile(r"(?i)\bpw\b[\"']?\s*[=:]\s*(?P<secret>\"[^\"\n]*\"|'[^'\n]*'|[^\s,;]+)"),
        False,
        ("pw",),
    ),
    # .env style: an upper-case name ending in a secret word, `=` or `:`, any value.
    (
        re.compile(
            r"\b[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|PASS|PWD|SECRET|TOKEN|KEY)\s*[=:]\s*[\"']?"
            r"(?P<secret>[^\s\"',;]+)"
        ),
        False,
        ("pass", "pwd", "secret", "token", "key"),
    ),
    (
        re.compile(
            r"(?i)\b" + _KEY_NAMES + r"\b[\"']?\s*(?:[=:]|\bis\b)?\s*[\"']?"
            r"(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)"
        ),
        True,
        ("token", "secret", "key"),
    ),
    # A URL's password (the user may be empty: redis://:pw@host).
    (re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]*:(?P<secret>[^\s@/]+)@"), False, ("://",)),
)


def _replacer(mixed: bool) -> Callable[[list[str] | None, re.Match[str]], str]:
    def replace(found: list[str] | None, match: re.Match[str]) -> str:
        if "secret" not in match.re.groupindex:
            if found is not None:
                found.append(match.group(0))
            return REDACTED
        value = match.group("secret")
        if value.startswith(REDACTED) or (mixed and not _mixes(value)):
            return match.group(0)
        if found is not None:
            found.append(value)
        start, end = (i - match.start() for i in match.span("secret"))
        text = match.group(0)
        return text[:start] + REDACTED + text[end:]

    return replace


def _mixes(value: str) -> bool:
    return bool(re.search(r"[0-9]", value)) and bool(re.search(r"[A-Za-z]", value))


_COMPILED = tuple((pattern, _replacer(mixed), triggers) for pattern, mixed, triggers in _RULES)

# Any trigger at all: most strings of a turn (keys, roles, prose) have none and cost one scan.
_ANY_TRIGGER = re.compile("|".join(re.escape(t) for _, _, triggers in _RULES for t in triggers))


def redact(text: str, found: list[str] | None = None) -> str:
    """Replace every secret-looking span in `text` with `[REDACTED]` (each one replaced is
    appended to `found`, when given)."""
    lower = text.lower()
    if _ANY_TRIGGER.search(lower) is None:
        return text
    for pattern, replace, triggers in _COMPILED:
        if any(t in lower for t in triggers):
            text = pattern.sub(partial(replace, found), text)
            lower = text.lower()
    return text


def redact_value(value: Any, _redact: Callable[[str], str] = redact) -> Any:
    """`redact` applied to every string inside nested dicts and lists (keys included)."""
    if isinstance(value, str):
        return _redact(value)
    if isinstance(value, dict):
        return {_redact(str(k)): redact_value(v, _redact) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v, _redact) for v in value]
    return value


# A secret shorter than this found in one field is not hunted for in the others: a two-letter
# password would mask every word holding those letters.
MIN_SHARED_SECRET = 4


def redact_record(value: Any) -> Any:
    """`redact_value` over one record (a tool call's arguments, a belief, a turn), then every
    secret found in any of its strings masked in all of them: a password recognised after
    "password:" in one field is masked where another field repeats it bare."""
    found: list[str] = []
    redacted = redact_value(value, lambda text: redact(text, found))
    # A value taken up to the next space may carry the sentence's closing punctuation.
    bare = {s.rstrip(".,:!?)]}'\"") for s in found}
    shared = sorted(
        {s for s in bare if len(s) >= MIN_SHARED_SECRET and not s.startswith(REDACTED)},
        key=len,
        reverse=True,
    )
    if not shared:
        return redacted
    masked = re.compile("|".join(re.escape(s) for s in shared))
    return redact_value(redacted, lambda text: masked.sub(REDACTED, text))
