"""Words a turn mentions rather than uses: those it asks the meaning of, and the person it asks
who was.

"what does 'sectio' literally mean in latin", "toplantıda biri 'that ship has sailed' dedi, ne
demek", "como le explico que significa 'la banda'": a word in quotes in a turn that asks what
something means is the word itself, not the user's thing that bears it (the midwife's note on
sectio, the shop's shipping rules, the band). "who was Dowding exactly?", "who was billy
bremner?": the user asks who someone was because they do not know them, so the name is not
their colleague's or their dog's. Such words name no belief (`beliefs.search.matcher`).

A quoted word in a turn that asks nothing of its meaning still names ("the 'Going Home' sheet
again"), and so does "who is Priya again?": the present tense asks after someone the user may
know.
"""

from __future__ import annotations

import re

from beliefs.text.query import QueryTerms

# Asking what something means, in the languages users write
_MEANING = re.compile(
    r"\b(?:mean|means|meaning|meant|translate|translation|significa|signifie|veut dire|"
    r"bedeutet|heißt|betekent|znaczy|oznacza|ne demek|anlamı|σημαίνει|matlab|vuol dire|"
    r"quer dizer|betyr|betyder|tarkoittaa|jelent|znamená|означает|значит)\b",
    re.IGNORECASE,
)
# Words in quotes: '…', "…", ‘…’, “…”, «…», up to a short phrase
_QUOTED = re.compile(r"(?<!\w)['\"‘“«]([^'\"’”»]{1,60})['\"’”»](?!\w)")
# The name after "who was": up to three words
_WHO_WAS = re.compile(r"\bwho (?:was|were)\s+((?:[^\W\d_][\w'’-]*\s*){1,3})", re.IGNORECASE)
_WORD = re.compile(r"[^\W_][\w'’+#.-]*")


def asked_about(terms: QueryTerms) -> frozenset[str]:
    """The turn's words (lower-cased) it mentions rather than uses (see the module)."""
    text = terms.cleaned
    out: set[str] = set()
    quotes = "'" in text or '"' in text or not text.isascii()  # curly quotes are not ASCII
    if quotes and _MEANING.search(text):
        for inside in _QUOTED.findall(text):
            out.update(word.lower() for word in _WORD.findall(inside))
    if "who w" in text.lower():
        for run in _WHO_WAS.findall(text):
            out.update(word.lower() for word in _WORD.findall(run))
    return frozenset(out)


def mentioned(query: str, asked: frozenset[str]) -> bool:
    """Whether every word of the turn's `query` (a word or phrase that matched a name) is one
    the turn mentions."""
    return all(word in asked for word in query.split(" "))
