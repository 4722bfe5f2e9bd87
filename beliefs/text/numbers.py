"""Which numbers a turn or a name keeps as terms: an alias may be one ("27001", "221-413",
"10X3", "11K", "30/40/30"), where a date, an amount or a count is no name."""

from __future__ import annotations

import itertools
import re

_PLAIN_NUMBER = re.compile(r"^\d+(?:\.\d+)*$")  # "27001", "9.2"
# "10X3", "4x4": a class, a set or a car as often as a size
_TIMES_CODE = re.compile(r"^\d+[xX]\d+$")
# "11K", "10K": a class, a set or a race when the letter is a capital ("11k" is an amount)
_CAPITAL_CODE = re.compile(r"^\d{1,3}[KMB]$")
# "221-413", "311/2": a part, a paper or a form numbered in groups; "30/40/30", "4-4-2": a
# split, a formation or a schedule, unless three groups can be read as a date ("12/03/2026",
# "2026-01-14")
_NUMBER_GROUPS = re.compile(r"^\d+(?:(?P<sep>[-/])\d+)(?:(?P=sep)\d+)*$")
# A figure as written anywhere in a text: "16:30", "2021", "1.83", "9,50" (the unit or sign
# around it aside)
_FIGURE = re.compile(r"\d+(?:[.,:/]\d+)*")
# Figures shorter than this are everyone's: a count, a size, an hour ("12 people", "40 tabs")
FIGURE_MIN = 3


def number_term(word: str) -> bool:
    """Whether `word`, a number as written, is kept as a term: plain ("27001", "9.2"), a size or
    class ("10X3", "11K"), numbered in two groups ("221-413", "311/2") or in more that no date
    reads ("30/40/30")."""
    return bool(
        _PLAIN_NUMBER.match(word)
        or _CAPITAL_CODE.match(word)
        or _TIMES_CODE.match(word)
        or (_NUMBER_GROUPS.match(word) and not _date_like(word))
    )


def _date_like(word: str) -> bool:
    """Whether three number groups can be read as a day, a month and a year in some order
    (a year of two or four digits)."""
    groups = re.split(r"[-/]", word)
    if len(groups) != 3:
        return False
    for day, month, year in itertools.permutations(groups):
        if len(year) in (2, 4) and 1 <= int(month) <= 12 and 1 <= int(day) <= 31:
            return True
    return False


def figures(text: str) -> frozenset[str]:
    """The figures of FIGURE_MIN characters or more that `text` writes ("16:30", "2021", "504",
    "1873"), as written: a time, a year or a number a turn shares with a belief's own text
    says which of the things of that name is meant."""
    return frozenset(f for f in _FIGURE.findall(text) if len(f) >= FIGURE_MIN)
