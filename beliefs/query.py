"""Turning text into search terms: name normalisation, query cleaning, words and n-grams."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

MAX_QUERY_CHARS = 1000
MAX_NGRAM = 4

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "in",
        "of",
        "to",
        "for",
        "with",
        "our",
        "my",
        "we",
        "i",
        "on",
        "at",
        "by",
        "up",
        "their",
        "its",
        "is",
        "are",
        "was",
        "be",
        "that",
        "this",
        "how",
        "what",
        "does",
    ]
)

_FENCED = re.compile(r"(```|~~~).*?(\1|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_URL = re.compile(r"\b(?:[a-z][a-z0-9+.-]*://|www\.)\S+", re.IGNORECASE)
_MARKUP = re.compile(r"</?[a-zA-Z][^<>\n]{0,200}>|&[a-z]+;|&#\d+;")
_TRACE_LINE = re.compile(
    r"^\s*(?:at\s+\S+.*\(.*:\d+(?::\d+)?\)|at\s+\S+:\d+(?::\d+)?|File \".*\", line \d+.*"
    r"|Traceback \(most recent call last\):.*|\w+(?:\.\w+)*(?:Error|Exception): .*"
    r"|#\d+\s+0x[0-9a-f]+.*)\s*$",
    re.MULTILINE,
)
_PATH = re.compile(
    r"(?<![\w/])(?:~|\.{1,2})?/[\w.@+-]+(?:/[\w.@+-]*)*"  # /abs, ./rel, ~/home
    r"|(?<![\w/])[\w.@+-]+(?:/[\w.@+-]+){2,}"  # a/b/c
    r"|(?<![\w/])[\w@+-]+(?:/[\w@+-]+)*/[\w@+-]+\.[a-z0-9]{1,5}\b"  # src/app.ts
    r"|[A-Za-z]:\\\S+",  # C:\windows
)
_LONG_HEX = re.compile(r"\b(?:0x)?[0-9a-f]{12,}\b", re.IGNORECASE)
_BARE_NUMBER = re.compile(r"^[#~±+\-$€£]?\d[\d.,:/%xX-]*[%kKmMbB]?$")
_LEAD_PUNCT = "\"'`“”‘’«»([{<*_~|—–-"
_TRAIL_PUNCT = "\"'`“”‘’«»()]}>,.;:!?*_~|—–-"
_POSSESSIVE_ENDS = ("'s", "’s")


def _without_possessive(word: str) -> str:
    return word[:-2] if word.endswith(_POSSESSIVE_ENDS) else word


def normalize_name(value: str) -> str:
    """The single token a canonical name or alias is indexed as.

    Underscores read as spaces, lower-cased, English possessive stripped, whitespace collapsed.
    """
    text = value.replace("_", " ").lower()
    words = [_without_possessive(w) for w in text.split()]
    return " ".join(w for w in words if w)


def clean_query(text: str) -> str:
    """Remove what is not talk about things: code, paths, traces, URLs, markup, hex, numbers.

    Each pattern runs only when the text holds a character it needs (most turns are prose).
    """
    if "```" in text or "~~~" in text:
        text = _FENCED.sub(" ", text)
    if "`" in text:
        text = _INLINE_CODE.sub(" ", text)
    if "at " in text or "File " in text or "Traceback" in text or ": " in text or "#" in text:
        text = _TRACE_LINE.sub(" ", text)
    if "://" in text or "www." in text:
        text = _URL.sub(" ", text)
    if "<" in text or "&" in text:
        text = _MARKUP.sub(" ", text)
    if "/" in text or "\\" in text:
        text = _PATH.sub(" ", text)
    text = _LONG_HEX.sub(" ", text)
    words = [w for w in text.split() if not _BARE_NUMBER.match(w)]
    return " ".join(words)[:MAX_QUERY_CHARS]


def query_words(cleaned: str) -> list[str]:
    """Words of a cleaned query, lower-cased, edge punctuation and possessives stripped."""
    out: list[str] = []
    for raw in cleaned.lower().split():
        word = raw.lstrip(_LEAD_PUNCT).rstrip(_TRAIL_PUNCT)
        word = _without_possessive(word).rstrip(_TRAIL_PUNCT)
        if not word or _BARE_NUMBER.match(word):  # "(2024)" is a number too
            continue
        if word.isalnum() or any(ch.isalnum() for ch in word):
            out.append(word)
    return out


def ngrams(words: Sequence[str], n: int) -> list[str]:
    return [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]


@dataclass(frozen=True)
class QueryTerms:
    """What a turn's text is matched with.

    `words` the distinct single words; `sequence` all words in order and `content` the same
    without stop words. Alias phrases are adjacent word n-grams (2..MAX_NGRAM) of `sequence`,
    canonical-name phrases n-grams of `content`; search asks only for the lengths its index
    holds (`phrases_of`), the properties give every length.
    """

    cleaned: str
    words: tuple[str, ...]
    sequence: tuple[str, ...]
    content: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not self.words

    def phrases_of(self, n: int) -> list[str]:
        """Distinct n-word phrases of the whole word sequence (for aliases)."""
        return list(dict.fromkeys(ngrams(self.sequence, n)))

    def canonical_phrases_of(self, n: int) -> list[str]:
        """Distinct n-word phrases of the stop-worded sequence (for canonical names)."""
        return list(dict.fromkeys(ngrams(self.content, n)))

    @property
    def phrases(self) -> tuple[str, ...]:
        return tuple(p for n in range(2, MAX_NGRAM + 1) for p in self.phrases_of(n))

    @property
    def canonical_phrases(self) -> tuple[str, ...]:
        return tuple(p for n in range(2, MAX_NGRAM + 1) for p in self.canonical_phrases_of(n))


def parse_query(text: str) -> QueryTerms:
    cleaned = clean_query(text)
    words = query_words(cleaned)
    return QueryTerms(
        cleaned=cleaned,
        words=tuple(dict.fromkeys(words)),
        sequence=tuple(words),
        content=tuple(w for w in words if w not in STOP_WORDS),
    )
