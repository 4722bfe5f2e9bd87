"""The turn's words whose sense must be checked however rare they are: words written inside a
name of several words ("Gary Lineker"), after a word of kinship ("my sister Priya"), said to be
from somewhere ("Kasumi from housekeeping"), or short codes written in capitals ("the UV
index"). The sense check (`beliefs.search.corroboration`) weighs each against the belief."""

from __future__ import annotations

import re
from itertools import pairwise

from beliefs.search.kinship import BEFORE_NAMES
from beliefs.search.name_roles import TITLES, descriptions
from beliefs.text.lexicon import has_other_sense, stem
from beliefs.text.query import QueryTerms


def in_names(terms: QueryTerms) -> frozenset[str]:
    """The turn's words whose sense must be checked however rare: those written inside a name
    of several words (`QueryTerms.runs`), named by a word of kinship ("my sister Priya") or
    by what they are from (`descriptions`: "Kasumi from housekeeping"), all saying which one
    is meant, and codes of two or three letters written only in capitals (`capital_codes`)."""
    seq = terms.sequence
    kin = (w for before, w in pairwise(seq) if before in BEFORE_NAMES)
    runs = (w for run in terms.runs for w in run if any(not _designator(m) for m in run if m != w))
    return frozenset([*runs, *kin, *capital_codes(terms), *descriptions(terms)])


_TITLES = frozenset(["dr", "mr", "ms", "st"])


def _designator(word: str) -> bool:
    """A model, version or suffix in a name ("CS 77", "A7 IV", "Smolov Jr"): it names a kind
    of the thing, not another thing of that name."""
    return any(ch.isdigit() for ch in word) or (len(word) <= 2 and word not in _TITLES)


def capital_codes(terms: QueryTerms) -> list[str]:
    """The turn's codes of two or three letters (`short_code`) it writes with a capital
    wherever it writes them: an acronym ("the UV index", "GCS 14", "my PD plan") is shared by
    many fields, where a tool's short name typed in lower case ("uv lock fails", "pg is slow")
    is the user's own."""
    out = []
    for word in terms.words:
        if not short_code(word):
            continue
        forms = re.findall(rf"(?<![\w-]){re.escape(word)}(?![\w-])", terms.cleaned, re.IGNORECASE)
        if forms and all(form != word for form in forms):
            out.append(word)
    return out


def run_mates(terms: QueryTerms, word: str) -> frozenset[str]:
    """Stems of the other words of each several-word name `word` is written in ("lineker" for
    "gary" in "Gary Lineker"): a name the belief's own text does not hold is another thing's."""
    return frozenset(
        stem(w) for run in terms.runs if word in run for w in run if w != word and w not in TITLES
    )


def short_code(token: str) -> bool:
    """A code of two or three letters that is no word ("uv", "gcs", "tf"): many things share
    it."""
    return len(token) <= 3 and token.isascii() and token.isalpha() and not has_other_sense(token)
