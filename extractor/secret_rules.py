"""The secret formats redaction knows by their shape (provider keys, private key blocks,
URLs with a password, `.env` assignments), and the checks a rule's value must pass.

A rule is (pattern, check, triggers). A pattern with a group "secret" replaces only that
group, otherwise the whole match; `check`, when given, must accept the match (a value after
"token" counts only if it looks generated, not like prose or a model name). A rule runs only
on text holding one of its triggers (lower-cased substrings; `Words`: whole words only, for a
pattern that holds its names between word boundaries), so ordinary prose costs a few
substring checks instead of every regex; a rule whose matches start at or just before a
trigger (`Led`) is tried only there in a long text.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, Self

Check = Callable[[re.Match[str]], bool]
Rule = tuple[re.Pattern[str], Check | None, tuple[str, ...]]


class Led(tuple[str, ...]):
    """A rule's triggers, for a rule whose every match starts at one of them or where the
    stretch just before one starts (`back`: that stretch read backwards from the trigger,
    `[a-z]*` for a pattern opening with `\\b[a-z]*?(?:token|key…)`), or with `inside`,
    anywhere in that stretch (after a hyphen in it): the rule then tries to match only there,
    not at every place of the text."""

    back: re.Pattern[str] | None
    inside: bool

    def __new__(cls, triggers: Iterable[str], back: str = "", *, inside: bool = False) -> Self:
        made = super().__new__(cls, triggers)
        made.back = re.compile(back) if back else None
        made.inside = inside
        return made


class Words(Led):
    """A rule's triggers that count only as whole words, each where a match starts: its
    pattern opens with them between word boundaries (`\\bexpo\\b`), so "export" and
    "probably" need not run it."""

    def __new__(cls, triggers: Iterable[str]) -> Self:
        return super().__new__(cls, triggers)


def mixes(match: re.Match[str]) -> bool:
    """The value mixes letters and digits ("token_budget_configuration" does not)."""
    value = match.group("secret")
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


_HEX = re.compile(r"[0-9a-fA-F]{24,}")
_RUNS = re.compile(r"[-_.~/+=]")


def looks_generated(value: str) -> bool:
    """A value a machine made: long hex (a UUID counts), or a long run mixing letters and
    digits (upper and lower case too, when shorter). Model names, versions and paths
    ("Meta-Llama-3.1-70B-Instruct", "2.15.0-rc.1", "/etc/ssl/x.pem") are short runs."""
    if len(value) < 16 or value[0] in "/~.$<{%" or _entropy(value) < 3.0:
        return False
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    if _HEX.fullmatch(value.replace("-", "")):
        return True
    for run in _RUNS.split(value):
        if len(run) < 10 or not any(c.isdigit() for c in run):
            continue
        cased = any(c.isupper() for c in run) and any(c.islower() for c in run)
        if cased or (len(run) >= 12 and any(c.isalpha() for c in run)):
            return True
    return False


# Words that make the value after a credential word an identifier, not a credential.
_NOT_A_SECRET = re.compile(
    r"(?i)\b(?:commit|sha|hash|revision|version|id|ids|uuid|digest|request|trace|build|"
    r"checksum|fingerprint|public|order|run|job|issue|limit|budget|count|deployment|customer|"
    r"channel|project|account|user|org|team|workspace|invoice|charge|event|message|thread|"
    r"file|model|bucket|region|cluster)\b"
)


def generated_after_a_name(match: re.Match[str]) -> bool:
    return looks_generated(match.group("secret")) and not _NOT_A_SECRET.search(match.group("gap"))


def given(match: re.Match[str]) -> bool:
    """A credential typed in, not a variable or a prompt for one (`$PASS`, `<pw>`, `{{pw}}`,
    `%PW%`, `***`). A placeholder such as "pass" is masked too: in a command it costs nothing,
    and some people's password is "secret"."""
    value = match.group("secret")
    return bool(value) and value[0] not in "$<{%-*"


def given_mixed(match: re.Match[str]) -> bool:
    return given(match) and mixes(match)


# Words after "password" that say what follows is not one ("password policy v2").
_ABOUT_PASSWORDS = re.compile(
    r"(?i)\b(?:policy|policies|length|hash|hashing|hashed|manager|field|reset|rule|rules|"
    r"requirement|requirements|strength|expiry|expires|characters|chars|format|version|"
    r"complexity|protected|protection|salt|salted|algorithm|prompt|form|page|flow)\b"
)


def a_password_in_prose(match: re.Match[str]) -> bool:
    return given_mixed(match) and not _ABOUT_PASSWORDS.search(match.group("gap"))


def a_password_for_a_user(match: re.Match[str]) -> bool:
    """`user:password` after `-u`: not `uid:gid` or `user:group` (`docker run -u 1000:1000`,
    `-u app:app`)."""
    user, secret = match.group("user"), match.group("secret")
    return given(match) and secret != user and not (user.isdigit() and secret.isdigit())


def trie_pattern(words: list[str]) -> str:
    """One regex alternation for `words` as a prefix tree ("a(?:ws|zure)"): the engine tries
    a letter once instead of each of ~150 literals at every position of every string."""
    tree: dict[str, Any] = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def pattern(node: dict[str, Any]) -> str:
        ends = "" in node
        branches = [re.escape(c) + pattern(child) for c, child in sorted(node.items()) if c]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if ends:
            return f"(?:{body})?" if len(branches) > 1 or len(body) > 1 else f"{body}?"
        return body

    return pattern(tree)


_KEY_NAMES = (
    r"[a-z0-9_\-]*(?:token|secret|api[_\- ]?key|apikey|access[_\- ]?key|auth[_\- ]?key"
    r"|client[_\- ]?secret|private[_\- ]?key)[a-z0-9_\-]*"
)

# Provider key shapes and values after their names.
KNOWN_FORMATS: tuple[Rule, ...] = (
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)"
        ),
        None,
        ("private key",),
    ),
    (re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{8,}"), None, ("sk-ant-",)),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"), None, ("sk-",)),
    # Stripe secret and restricted keys, webhook secrets
    (re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"), None, ("k_live_", "k_test_")),
    (re.compile(r"\bwhsec_[A-Za-z0-9]{16,}"), None, ("whsec_",)),
    (
        re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
        None,
        ("akia", "asia", "agpa", "aida", "aroa"),
    ),
    (
        re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b"),
        None,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), None, ("github_pat_",)),
    (
        re.compile(r"\bgl(?:pat|dt|ptt|rt|cbt|oas|soat|ft)-[A-Za-z0-9_\-]{20,}"),
        None,
        ("glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "gloas-", "glsoat-", "glft-"),
    ),
    (re.compile(r"\bx(?:ox[abposre]|app)-[A-Za-z0-9\-]{10,}"), None, ("xox", "xapp-")),
    (re.compile(r"hooks\.slack\.com/services/[A-Za-z0-9/_\-]+"), None, ("hooks.slack.com",)),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), None, ("aiza",)),
    (re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"), None, ("sg.",)),
    (re.compile(r"\bnpm_[A-Za-z0-9]{30,}"), None, ("npm_",)),
    (re.compile(r"\bpypi-AgE[A-Za-z0-9_\-]{20,}"), None, ("pypi-age",)),
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}"), None, ("hf_",)),
    (re.compile(r"\bdo[por]_v1_[a-f0-9]{40,}"), None, ("_v1_",)),
    (
        re.compile(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
        None,
        ("shpat_", "shpca_", "shppa_", "shpss_"),
    ),
    (re.compile(r"\bdapi[a-f0-9]{32}"), None, ("dapi",)),
    *(
        (re.compile(pattern), None, triggers)
        for pattern, triggers in (
            # Developer platforms and AI providers, by their documented prefixes
            (r"\bdckr_pat_[A-Za-z0-9_\-]{20,}", ("dckr_pat_",)),
            (r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{40,}", (".atlasv1.",)),
            (r"\bgl(?:sa|c)_[A-Za-z0-9_\-=+/]{20,}", ("glsa_", "glc_")),
            (r"\bdp\.(?:st|sa|ct|pt|scim|audit)\.[A-Za-z0-9_\-.]{20,}", ("dp.",)),
            (r"\bpul-[a-f0-9]{40}", ("pul-",)),
            (r"\btskey-[a-z]+-[A-Za-z0-9\-]{20,}", ("tskey-",)),
            (r"\bfm[12]_[A-Za-z0-9+/=_\-]{20,}", ("fm1_", "fm2_")),
            # A short prefix, then one run holding a digit ("fw_update_notes" is prose)
            (
                r"\b(?:rnd|nfp|sbp|fw|xai|pplx|bkua|squ|sqp|sqa)[_\-](?=[A-Za-z]*[0-9])"
                r"[A-Za-z0-9]{20,}",
                ("rnd_", "nfp_", "sbp_", "fw_", "bkua_", "squ_", "sqp_", "sqa_", "xai-", "pplx-"),
            ),
            (r"\btvly-(?:dev-)?[A-Za-z0-9]{20,}", ("tvly-",)),
            (r"\bsgp_(?:[a-f0-9]{16}_)?[a-f0-9]{40}", ("sgp_",)),
            (r"\bre_[A-Za-z0-9]{8}_[A-Za-z0-9]{20,}", ("re_",)),
            (r"\blsv2_(?:pt|sk)_[A-Za-z0-9_]{20,}", ("lsv2_",)),
            (r"\bfc-[a-f0-9]{32}", ("fc-",)),
            (r"\bbb_live_[A-Za-z0-9_\-]{20,}", ("bb_live_",)),
            (r"\bsk_[a-f0-9]{48}\b", ("sk_",)),
            (r"\bSK[0-9a-f]{32}\b", ("sk",)),
            (r"\bATBB[A-Za-z0-9_\-=]{20,}", ("atbb",)),
            (r"\bGR1348941[A-Za-z0-9_\-]{20,}", ("gr1348941",)),
            (r"\bCCIPAT_[A-Za-z0-9_]{20,}", ("ccipat_",)),
            (r"\bAKCp[A-Za-z0-9]{60,}", ("akcp",)),
            (r"\bCFPAT-[A-Za-z0-9_\-]{40,}", ("cfpat-",)),
            (r"\bpat-(?:na|eu)[0-9]-[a-f0-9\-]{36}", ("pat-na", "pat-eu")),
            (r"\b00D[A-Za-z0-9]{12,15}![A-Za-z0-9_.]{60,}", ("00d",)),
            (r"\bops_eyJ[A-Za-z0-9+/=_\-]{20,}", ("ops_eyj",)),
            (r"\bsl\.[A-Za-z0-9_\-]{100,}", ("sl.",)),
        )
    ),
    # Telegram bot tokens, also inside an API URL (`/bot<token>/`)
    (
        re.compile(r"(?<![0-9])[0-9]{6,12}:(?P<secret>[A-Za-z0-9_\-]{30,})(?![A-Za-z0-9_\-])"),
        mixes,
        Led((":",), "[0-9]*"),  # a match starts where the digits before the colon do
    ),
    (
        re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        None,
        ("eyj",),
    ),
    # "Bearer authentication" is prose: a token is more than one word of letters.
    (
        re.compile(r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)"),
        lambda m: not m.group("secret").isalpha(),
        ("bearer",),
    ),
    (re.compile(r"(?i)\bbasic\s+(?P<secret>[A-Za-z0-9+/]{12,}={0,2})"), None, ("basic",)),
    (re.compile(r"(?i)\bAccountKey=(?P<secret>[^;\s]+)"), None, ("accountkey=",)),
    (
        re.compile(
            r"(?i)\b(?:password|passwd|passphrase|pwd)\b[\"']?\s*(?:[=:]|\bis\b)\s*"
            r"(?P<secret>\"[^\"\n]*\"|'[^'\n]*'|[^\s,;]+)"
        ),
        None,
        Led(("pass", "pwd")),
    ),
    (
        re.compile(r"(?i)\bpw\b[\"']?\s*[=:]\s*(?P<secret>\"[^\"\n]*\"|'[^'\n]*'|[^\s,;]+)"),
        None,
        ("pw",),
    ),
    # .env style: an upper-case name ending in a secret word, `=` or `:`, any value.
    (
        re.compile(
            r"\b[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|PASS|PWD|SECRET|TOKEN|KEY)\s*[=:]\s*[\"']?"
            r"(?P<secret>[^\s\"',;]+)"
        ),
        None,
        Led(("pass", "pwd", "secret", "token", "key"), "[A-Z0-9_]*"),
    ),
    (
        re.compile(
            r"(?i)\b" + _KEY_NAMES + r"\b[\"']?\s*(?:[=:]|\bis\b)?\s*[\"']?"
            r"(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)"
        ),
        mixes,
        # a match starts in the name's run of word characters and hyphens (or "api key"'s)
        Led(("token", "secret", "key"), r" ?(?i:[a-z0-9_\-]*)", inside=True),
    ),
    # A URL's password (the user may be empty: redis://:pw@host).
    (re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]*:(?P<secret>[^\s@/]+)@"), None, ("://",)),
)
