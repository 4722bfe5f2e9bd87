"""Secret redaction: applied to the turn before any prompt and to everything extraction stores."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

import ahocorasick

from extractor.credential_rules import CREDENTIAL_RULES
from extractor.secret_rules import KNOWN_FORMATS, Check, Rule

RULES = KNOWN_FORMATS + CREDENTIAL_RULES

REDACTED = "[REDACTED]"


def _replacer(check: Check | None) -> Callable[[list[str] | None, re.Match[str]], str]:
    def replace(found: list[str] | None, match: re.Match[str]) -> str:
        if "secret" not in match.re.groupindex:
            if found is not None:
                found.append(match.group(0))
            return REDACTED
        value = match.group("secret")
        if value.startswith(REDACTED) or (check is not None and not check(match)):
            return match.group(0)
        if found is not None:
            found.append(value)
        start, end = (i - match.start() for i in match.span("secret"))
        text = match.group(0)
        return text[:start] + REDACTED + text[end:]

    return replace


_COMPILED = tuple((pattern, _replacer(check)) for pattern, check, _ in RULES)


def _finder(rules: tuple[Rule, ...]) -> Any:
    """One Aho–Corasick automaton of every rule's trigger words, each word standing for the
    indexes of the rules it triggers (in the rules' order)."""
    rules_of: dict[str, list[int]] = {}
    for index, (_, _, triggers) in enumerate(rules):
        for trigger in triggers:
            rules_of.setdefault(trigger, []).append(index)
    automaton = ahocorasick.Automaton()
    for trigger, indexes in rules_of.items():
        automaton.add_word(trigger, tuple(indexes))
    automaton.make_automaton()
    return automaton


# Every trigger, wherever it stands (overlapping ones too), in one pass of C over the text:
# 7x faster than a regular expression's lookahead at each position, and a model's reply is
# the longest text a turn has. Most strings of a turn (keys, roles, prose) hold none, and the
# rest run only the rules whose triggers they hold.
_TRIGGERS = _finder(RULES)


def redact(text: str, found: list[str] | None = None) -> str:
    """Replace every secret-looking span in `text` with `[REDACTED]`, and every other place
    the text repeats one of them (each one replaced is appended to `found`, when given)."""
    held = {i for _, indexes in _TRIGGERS.iter(text.lower()) for i in indexes}
    if not held:
        return text
    here: list[str] = []
    for index in sorted(held):
        pattern, replace = _COMPILED[index]
        text = pattern.sub(partial(replace, here), text)
    if here:
        # A model's raw reply is one string holding many fields: "password: X" in one and
        # X bare in another.
        text = _mask(text, _masker(here))
        if found is not None:
            found.extend(here)
    return text


def _mask(text: str, masker: re.Pattern[str] | None) -> str:
    return text if masker is None else masker.sub(REDACTED, text)


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


def _masker(found: list[str]) -> re.Pattern[str] | None:
    """One pattern for every secret found (longest first), or None when none is worth it."""
    # A value taken up to the next space may carry the sentence's closing punctuation.
    bare = {s.rstrip(".,:!?)]}'\"") for s in found}
    shared = sorted(
        {s for s in bare if len(s) >= MIN_SHARED_SECRET and not s.startswith(REDACTED)},
        key=len,
        reverse=True,
    )
    return re.compile("|".join(re.escape(s) for s in shared)) if shared else None


def redact_record(value: Any) -> Any:
    """`redact_value` over one record (a tool call's arguments, a belief, a turn), then every
    secret found in any of its strings masked in all of them: a password recognised after
    "password:" in one field is masked where another field repeats it bare."""
    found: list[str] = []
    redacted = redact_value(value, lambda text: redact(text, found))
    masker = _masker(found)
    if masker is None:
        return redacted
    return redact_value(redacted, lambda text: _mask(text, masker))


def redact_fields(record: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """`redact_record` over `fields` of `record` as one record; its other fields kept as they
    are."""
    texts: dict[str, Any] = redact_record({name: record[name] for name in fields if name in record})
    return record | texts
