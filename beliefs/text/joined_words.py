"""The words inside a turn's joined words: a hyphenated word's parts ("dagster-dbt"), a word
split at an elided article or a case ending ("l'API", "Etsy'de"), a build's tags
("2.2.0+cu118"), and the turn's words with each hyphenated or snake_case word spaced out."""

from __future__ import annotations

import re

_ELIDED = re.compile("['’]")
# English contractions are no elision: "don't" holds no word "don"
_CONTRACTIONS = tuple(f"{q}{end}" for q in "'’" for end in ("t", "s", "m", "re", "ve", "ll", "d"))
_VERSION = re.compile(r"\d+(?:\.\d+)+")  # "2022.3'ten": a case ending on a version number


def _elided(part: str) -> bool:
    """Whether a part of a word split at its apostrophe is a word: two letters or more, or a
    version number ("2022.3" of "2022.3'ten")."""
    return len(part) > 1 and (part.isalnum() or _VERSION.fullmatch(part) is not None)


def _hyphen_part(part: str) -> bool:
    """Whether a part of a hyphenated word is a word: two letters or more, letters only."""
    return len(part) > 1 and part.isalpha()


def _hyphen_parts(word: str) -> list[str]:
    """The words of a hyphenated word: its parts of two letters or more ("dagster", "dbt"),
    and of a code numbered in groups its coded parts of three characters or more and its
    leading groups ("RD-R7100" gives "r7100", "SHF-2026-014" "shf-2026", as a family of codes
    is written; "L4-L5" gives no "l4")."""
    pieces = word.split("-")
    if not any(ch.isdigit() for ch in word) or "/" in word or "\\" in word:
        return [p for p in pieces if _hyphen_part(p)]
    out = [p for p in pieces if _hyphen_part(p) or _coded_part(p)]
    out += ["-".join(pieces[:end]) for end in range(2, len(pieces))]
    return out


def _coded_part(part: str) -> bool:
    """Whether a part of a code numbered in groups names something: three characters or more,
    letters and digits ("r7100"; not "l4", not "2026")."""
    return len(part) > 2 and _tag(part)


def _tag(part: str) -> bool:
    """Whether a part of a word joined by "+" is a name: letters, perhaps with digits."""
    return len(part) > 1 and part.isalnum() and not part.isdigit()


def joined_parts(words: list[str], text: str) -> list[str]:
    """The words inside the turn's joined words (each kind looked for only when the text holds
    its joint): a hyphenated word's ("dagster-dbt", "BaFin-Auflagen"), one split at its
    apostrophe, an elided article or a case ending ("l'API", "dell'agenzia", "Etsy'de",
    "2022.3'ten"; not "don't"), and a build's tags ("2.2.0+cu118"; not "c++")."""
    parts: list[str] = []
    if "-" in text:
        for word in words:
            if "-" in word:
                parts += _hyphen_parts(word)
    if "'" in text or "’" in text:
        parts += [
            p
            for w in words
            if ("'" in w or "’" in w) and not w.endswith(_CONTRACTIONS)
            for p in _ELIDED.split(w)
            if _elided(p)
        ]
    if "+" in text:
        parts += [p for w in words if "+" in w.strip("+") for p in w.split("+") if _tag(p)]
    return parts


def spaced_parts(words: list[str]) -> tuple[str, ...]:
    """`words` with each hyphenated or snake_case word's parts in its place, or () when none
    has parts: a name of several words holding an identifier ("nginx proxy_cache") is indexed
    with its underscores as spaces (`normalize_name`)."""
    out: list[str] = []
    for word in words:
        if "_" in word:
            parts = [p for p in word.split("_") if p]
        else:
            parts = word.split("-") if "-" in word else []
            if not all(map(_hyphen_part, parts)):
                parts = []
        if len(parts) > 1:
            out.extend(parts)
        else:
            out.append(word)
    return tuple(out) if len(out) > len(words) else ()
