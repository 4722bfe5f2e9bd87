"""Which option names a sentence states as the choice, and which it only rules out.

"Use pnpm; never yarn" names pnpm as the choice and yarn as ruled out; "Design schemas for
PostgreSQL 16" names PostgreSQL as the choice. Supersession and `verify()` both ask this of a
belief's content and directive.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from difflib import SequenceMatcher

from beliefs.text.query import STOP_WORDS

# A clause that rules out what follows it, up to the clause's end ("never in cups or ounces.",
# "never deploy to Heroku"); a move rules out only what comes before its new option ("from
# PostgreSQL to CockroachDB", "instead of yarn for installs").
_NEGATION = (
    r"\b(?:no\s+longer|not|never|no|avoid|without|except|stopped|quit)\b"
    r"[^.;:!?,]*?(?=\s+(?:but|and\s+use)\b|[.;:!?,]|$)"
)
_MOVE = (
    r"\b(?:(?:moved|moving|switched|switching|migrated|migrating|away)\s+from|off|instead\s+of|"
    r"rather\s+than|replacing|replaced|replaces|dropped|dropping|abandoned|ditched)\b"
    r"[^.;:!?,]*?(?=\s+(?:to|for|with|by|but|and\s+use)\b|[.;:!?,]|$)"
)
_RULED_OUT = re.compile(f"{_NEGATION}|{_MOVE}", re.IGNORECASE)
# The option a move names as its new one: "from yarn to pnpm", "CockroachDB instead of ...".
_OPTION = r"([\w+#-]*\w(?:\.\w+)*(?:\s+\d[\w.]*)?)"
_MOVED_TO = re.compile(
    r"\b(?:from|off)\s+[^.;:!?,]*?\s+(?:to|for)\s+"
    + _OPTION
    + r"|"
    + _OPTION
    + r"\s+(?:instead\s+of|rather\s+than)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[\w.+#-]*\w", re.UNICODE)
MAX_SWAPPED_WORDS = 2
MAX_SPAN_WORDS = 4


def chosen_text(text: str) -> str:
    """`text` without the clauses that rule an option out."""
    return _RULED_OUT.sub(" ", text)


def mentions(text: str, name: str) -> bool:
    """Whether `text` contains `name` as whole words, in any letter case."""
    words = " ".join(name.split())
    return bool(words) and _whole(words).search(text) is not None


def substitute(text: str, name: str, replacement: str) -> str:
    """`text` with every whole-word `name` (any letter case) written as `replacement`."""
    words = " ".join(name.split())
    return _whole(words).sub(lambda _: replacement, text) if words else text


def _whole(words: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.+#-])" + re.escape(words) + r"(?![\w+#-]|\.\w)", re.IGNORECASE)


def swapped_span(old: str, new: str) -> tuple[str, str] | None:
    """The one run of words `new` wrote in place of a run of `old` ("PostgreSQL 16" ->
    "CockroachDB 24"), when that is the only difference and both runs are short."""
    a, b = _WORD.findall(old), _WORD.findall(new)
    changes = [
        op
        for op in SequenceMatcher(
            None, [w.casefold() for w in a], [w.casefold() for w in b]
        ).get_opcodes()
        if op[0] != "equal"
    ]
    if len(changes) != 1 or changes[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = changes[0]
    if i2 - i1 > MAX_SPAN_WORDS or j2 - j1 > MAX_SPAN_WORDS:
        return None
    return " ".join(a[i1:i2]), " ".join(b[j1:j2])


def moved_to(text: str) -> str | None:
    """The new option a sentence moves to ("Moved from yarn to pnpm." -> "pnpm"), if any."""
    found = _MOVED_TO.search(text)
    return None if found is None else next(g for g in found.groups() if g)


def chosen_names(text: str, names: Iterable[str]) -> list[str]:
    """The `names` that `text` states as the choice (mentioned outside ruled-out clauses)."""
    kept = chosen_text(text)
    return [name for name in names if mentions(kept, name)]


def same_option(alias: str, name: str) -> bool:
    """Whether `alias` is another way of writing the option `name`: one is a prefix of the
    other (postgres, postgresql), or `alias` is a short abbreviation of it (pg)."""
    a, n = alias.casefold().strip(), name.casefold().strip()
    if not a or not n:
        return False
    if a == n:
        return True
    shorter, longer = sorted((a, n), key=len)
    if len(shorter) >= 4 and longer.startswith(shorter):
        return True
    return 2 <= len(a) <= 4 and a.isalpha() and a[0] == n[0] and _subsequence(a, n)


def _subsequence(short: str, long: str) -> bool:
    rest = iter(long)
    return all(ch in rest for ch in short)


def swapped_words(old: str, new: str) -> list[str]:
    """The words `old` has and `new` lacks, when the two differ by a swap of at most two words
    ("uses Redis." -> "uses Valkey."): the replaced option. Empty for a rewrite."""
    old_words = _words(old)
    new_words = _words(new)
    gone = [w for w in old_words if w.casefold() not in {n.casefold() for n in new_words}]
    came = [w for w in new_words if w.casefold() not in {o.casefold() for o in old_words}]
    named = [w for w in dict.fromkeys(gone) if not w.isdigit()]
    if not named or len(gone) > MAX_SWAPPED_WORDS or len(came) > MAX_SWAPPED_WORDS + 1:
        return []
    return named


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text) if w.casefold() not in STOP_WORDS]
