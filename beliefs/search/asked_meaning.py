"""Words a turn mentions rather than uses: those it asks the meaning of, the one word it asks
what it is, and the person it asks who was.

"what does 'sectio' literally mean in latin", "toplantıda biri 'that ship has sailed' dedi, ne
demek", "como le explico que significa 'la banda'": a word in quotes in a turn that asks what
something means is the word itself, not the user's thing that bears it (the midwife's note on
sectio, the shop's shipping rules, the band). "who was Dowding exactly?", "who was billy
bremner?": the user asks who someone was because they do not know them, so the name is not
their colleague's or their dog's. "what's an SBAR?", "c'est quoi un ETF ?", "they wrote 'our
AE will call', ce e AE?": a word the turn asks what it is, alone before the question mark, with
"a" or quoted before, is one the user does not know. Such words name no belief
(`beliefs.search.matcher`).

A quoted word in a turn that asks nothing of its meaning still names ("the 'Going Home' sheet
again"), and so do "who is Priya again?" (the present tense asks after someone the user may
know), "what's Atlas?", "what is Atlas again?" and "what's the CRM export limit?".
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
# What a thing is, asked of one word with nothing after but "exactly" and the question mark,
# named with "a" ("what's an SBAR?", "c'est quoi un ETF ?") or quoted before ("they wrote 'our AE
# will call', ce e AE?"): not of "the", "my" or "that" thing, nor bare ("what's Atlas?" may ask
# after the user's own), nor "again", which asks after something the user knows
_NOT_NAMED = "the|my|our|your|this|that|it|la|le|les|el|los|las|der|die|das|de|het"
_NAMED = rf"((?!(?:{_NOT_NAMED})\b)[^\W\d_][\w+#.-]*)"
_WHAT_IS = re.compile(
    r"(?:\bwhat(?:['’]s| is| are)|\bc['’]est quoi|\bqu['’]est-ce que c['’]est|\bce (?:e|este)"
    r"|\b(?:qué|que|o que) (?:es|é)|\bcos['’]è|\bwat is|\bwas ist|\bco to (?:jest)?|\bapa itu"
    r"|\bano (?:ang|yung))\s+((?:an?|un|une|una|um|uma|een|ein|eine|o)\s+)?"
    + _NAMED
    + r"\s*(?:exactly|precisely|precies|eigenlijk|genau|exactement|exactamente)?\s*\?",
    re.IGNORECASE,
)
# a word each alternative of `_MEANING` and `_WHAT_IS` holds, lower-cased
_MEANING_WORDS = (
    *("mean", "translat", "signif", "veut dire", "bedeut", "heißt", "betekent", "znaczy"),
    *("oznacza", "demek", "anlamı", "σημαίνει", "matlab", "vuol dire", "quer dizer", "bety"),
    *("tarkoittaa", "jelent", "znamená", "означает", "значит"),
)
_WHAT_IS_WORDS = (
    *("what", "quoi", "c'est", "c’est", "ce e", "qué es", "que es", "que é", "cos'è", "cos’è"),
    *("wat is", "was ist", "co to", "apa itu", "ano "),
)
_WHAT_IS_REACH = 60  # characters before a question mark that can hold such a question


def asked_about(terms: QueryTerms) -> frozenset[str]:
    """The turn's words (lower-cased) it mentions rather than uses (see the module)."""
    text = terms.cleaned
    out: set[str] = set()
    lowered = text.lower()
    quotes = "'" in text or '"' in text or not text.isascii()  # curly quotes are not ASCII
    # the patterns only where a word of theirs is (most turns hold none): each is many
    # alternatives, slower to search than the words are to find
    if quotes and any(word in lowered for word in _MEANING_WORDS) and _MEANING.search(text):
        out.update(quoted(text))
    if "who w" in lowered:
        for run in _WHO_WAS.findall(text):
            out.update(word.lower() for word in _WORD.findall(run))
    if "?" in text and any(word in lowered for word in _WHAT_IS_WORDS):
        at = text.find("?")
        while at >= 0:  # the question reads in the words before its mark
            asked = _WHAT_IS.search(text, max(0, at - _WHAT_IS_REACH), at + 1)
            if asked is not None:
                article, named = asked.groups()
                if article or named.lower() in quoted(text):
                    out.add(named.lower())
            at = text.find("?", at + 1)
    return frozenset(out)


def quoted(text: str) -> frozenset[str]:
    """The words of `text` in quotes, lower-cased."""
    return frozenset(w.lower() for inside in _QUOTED.findall(text) for w in _WORD.findall(inside))


def mentioned(query: str, asked: frozenset[str]) -> bool:
    """Whether every word of the turn's `query` (a word or phrase that matched a name) is one
    the turn mentions."""
    return all(word in asked for word in query.split(" "))
