"""Secret redaction: applied to the turn before any prompt and to everything extraction stores."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

import ahocorasick

from extractor.credential_rules import CREDENTIAL_RULES
from extractor.secret_rules import KNOWN_FORMATS, Check, Led, Rule, Words

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
# Where each rule's match may start before its trigger (`Led`); None: anywhere in the text.
_LEADS = tuple(triggers if isinstance(triggers, Led) else None for _, _, triggers in RULES)
# Shorter texts (most of a turn's strings) run each rule they trigger over all of it: looking
# only near the triggers pays from about this length (a model's reply is longer).
NEAR_FROM = 200


def _finder(rules: tuple[Rule, ...]) -> Any:
    """One Aho–Corasick automaton of every rule's trigger words. Each word stands for the
    indexes of the rules it triggers anywhere and of those it triggers as a whole word only
    (`Words`), each followed by those of them whose matches start near it (`Led`: where it
    stands is kept); then its length."""
    anywhere: dict[str, list[int]] = {}
    whole: dict[str, list[int]] = {}
    for index, (_, _, triggers) in enumerate(rules):
        for trigger in triggers:
            (whole if isinstance(triggers, Words) else anywhere).setdefault(trigger, []).append(
                index
            )

    def with_led(indexes: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return tuple(indexes), tuple(i for i in indexes if isinstance(rules[i][2], Led))

    automaton = ahocorasick.Automaton()
    for trigger in {**anywhere, **whole}:
        value = (
            *with_led(anywhere.get(trigger, [])),
            *with_led(whole.get(trigger, [])),
            len(trigger),
        )
        automaton.add_word(trigger, value)
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
    held, places = _held(text, near=len(text) >= NEAR_FROM)
    if not held:
        return text
    here: list[str] = []
    backwards = "" if places is None else text[::-1]  # stretches before triggers, read back
    for index in sorted(held):
        pattern, replace = _COMPILED[index]
        led = _LEADS[index]
        if led is None or places is None:
            done = pattern.sub(partial(replace, here), text)
        else:
            at = places.get(index, ())
            done = _sub_near(pattern, led, partial(replace, here), text, backwards, at)
        if done != text:  # a secret replaced: what follows stands elsewhere
            text = done
            if places is not None:
                backwards, places = text[::-1], _held(text, near=True)[1]
    if here:
        # A model's raw reply is one string holding many fields: "password: X" in one and
        # X bare in another.
        text = _mask(text, _masker(here))
        if found is not None:
            found.extend(here)
    return text


def redact_every_rule(text: str) -> str:
    """What `redact` does, by running every rule over the whole text: no triggers, no places.
    The reference its shortcuts are held to (tests, `bench/redaction_eval.py`)."""
    here: list[str] = []
    for pattern, replace in _COMPILED:
        text = pattern.sub(partial(replace, here), text)
    return _mask(text, _masker(here)) if here else text


def _held(text: str, *, near: bool) -> tuple[set[int], dict[int, list[int]] | None]:
    """The rules whose triggers `text` holds, anywhere or as a whole word ("expo" in "expo
    token", not in "export"), and with `near`, for those whose matches start near one (`Led`)
    where each stands; None without `near`, or when places in the lower-cased text do not
    carry over (a letter whose lower case is longer)."""
    low = text.lower()
    held: set[int] = set()
    places: dict[int, list[int]] = {}
    for end, (anywhere, led, whole, whole_led, length) in _TRIGGERS.iter(low):
        held.update(anywhere)
        if near:
            for index in led:
                places.setdefault(index, []).append(end - length + 1)
        if whole:
            start = end - length + 1
            if not (_in_word(low, start - 1) or _in_word(low, end + 1)):
                held.update(whole)
                if near:
                    for index in whole_led:
                        places.setdefault(index, []).append(start)
    return held, places if near and len(low) == len(text) else None


def _sub_near(
    pattern: re.Pattern[str],
    led: Led,
    replace: Callable[[re.Match[str]], str],
    text: str,
    backwards: str,
    triggers: list[int] | tuple[()],
) -> str:
    """`pattern.sub(replace, text)` for a rule whose every match starts near one of its
    `triggers` (where each stands in `text`, `Led`; `backwards` is `text` reversed): the same
    matches, left to right and apart, looked for only there (a long reply holds a few
    "token"s and "key"s, and the pattern would be tried at each of its thousands of places)."""
    starts: set[int] = set()
    for at in triggers:
        start = at
        if led.back is not None:
            before = len(text) - at  # where the character before the trigger stands backwards
            stretch = led.back.match(backwards, before)
            start -= 0 if stretch is None else stretch.end() - before
        if led.inside:
            starts.update(range(start, at + 1))
        else:
            starts.update((start, at))
    out: list[str] = []
    done = 0
    for start in sorted(starts):
        if start < done:
            continue
        match = pattern.match(text, start)
        if match is None:
            continue
        out += (text[done : match.start()], replace(match))
        done = match.end()
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def _in_word(text: str, at: int) -> bool:
    """Whether `text[at]` is a word character (what a pattern's `\\b` looks at)."""
    return 0 <= at < len(text) and (text[at].isalnum() or text[at] == "_")


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
