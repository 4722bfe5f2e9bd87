"""Turning text into search terms: name normalisation, query cleaning, words and n-grams."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from beliefs.text.case_endings import suffixed_names
from beliefs.text.identifiers import code_terms, has_other_script, split_scripts
from beliefs.text.joined_words import joined_parts, spaced_parts
from beliefs.text.lexicon import (
    is_common,
    is_function_word,
    is_function_word_elsewhere,
    turn_languages,
)
from beliefs.text.numbers import figures, number_term
from beliefs.text.punctuation import LEAD_PUNCT, RUN_BREAKS, TRAIL_PUNCT

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
    r"|(?<![\w/])(?!\d+(?:/\d+)+(?![\w.@+/-]))[\w.@+-]+(?:/[\w.@+-]+){2,}"  # a/b/c, not 30/40/30
    r"|(?<![\w/])[\w@+-]+(?:/[\w@+-]+)*/[\w@+-]+\.[a-z0-9]{1,5}\b"  # src/app.ts
    r"|[A-Za-z]:\\\S+"  # C:\windows
    r"|\\\\[\w.$-]+\\\S*",  # \\server\share
)
# a hash or an id in hex; twelve digits and more with no letter are an account's or an order's
# number ("731902458816"), a term
_LONG_HEX = re.compile(r"\b(?:0x[0-9a-f]{12,}|(?=\d*[a-f])[0-9a-f]{12,})\b", re.IGNORECASE)
_BARE_NUMBER = re.compile(r"^[#~±+\-$€£]?\d[\d.,:/%xX-]*[%kKmMbB]?$")
_NUMBER_STARTS = frozenset("#~±+-$€£0123456789")  # what `_BARE_NUMBER` can start with
_POSSESSIVE_ENDS = ("'s", "’s")
_NAME_EDGES = "\"'“”‘’«»,;!?"  # quotes and a list's commas around a name's words


def _without_possessive(word: str) -> str:
    return word[:-2] if word.endswith(_POSSESSIVE_ENDS) else word


def normalize_name(value: str) -> str:
    """The single token a canonical name or alias is indexed as: its words read as a turn's
    are (`_read_word`), so a name typed as it is written matches.

    Underscores read as spaces, lower-cased; the punctuation around a word ("'access to'
    wording", "Shine, Jesus, Shine", "VTS (ECC)", "No. 4", "{PLAYER_NAME}"), an English
    possessive and call parentheses ("DIVIDE()") stripped; pieces without a letter or digit
    ("&") left out; whitespace collapsed.
    """
    words = (_name_word(w) for w in value.replace("_", " ").lower().split())
    return " ".join(w for w in words if any(ch.isalnum() for ch in w))


# A name with a note after it in parentheses: "Vortex (hardlink deployment broke saves)",
# "Docker Desktop (licence)", "Phrase (Memsource)"
_NOTED = re.compile(r"^(.*?\w)\s+\(([^()]+)\)$")


def name_forms(value: str) -> tuple[str, ...]:
    """The tokens a canonical name or alias is indexed as: the whole (`normalize_name`), and
    for a name with a note after it in parentheses, the name before the note too (the note says
    why, or what it is: "Vortex" is what a turn calls "Vortex (hardlink deployment broke
    saves)")."""
    whole = normalize_name(value)
    noted = _NOTED.match(value.strip())
    if noted is None:
        return (whole,) if whole else ()
    before = normalize_name(noted.group(1))
    inner = normalize_name(noted.group(2))
    other = inner if " " not in inner and not inner.isdigit() else ""
    return tuple(t for t in dict.fromkeys((whole, before, other)) if t)


def _name_word(word: str) -> str:
    word = _without_possessive(word.strip(_NAME_EDGES).lstrip(LEAD_PUNCT))
    word = word.removesuffix("()").rstrip(TRAIL_PUNCT)
    # a path of several folders as a turn reads one, from its first folder to its last:
    # "~/Genealogy/Scans/" and "/cluster/scratch/me" are "genealogy/scans" and
    # "cluster/scratch/me" ("~/jobs/", one folder, is no word "jobs")
    return word.strip("/") if "/" in word.strip("/") else word


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
    text = split_scripts(text)
    words = [
        w
        for w in text.split()
        if w[0] not in _NUMBER_STARTS  # most words: no number can start there
        or number_term(w.rstrip(TRAIL_PUNCT))
        or not _BARE_NUMBER.match(w)
    ]  # "Grade 8." and "ISO 27001," keep their number
    return " ".join(words)[:MAX_QUERY_CHARS]


def is_telling(word: str) -> bool:
    """A word specific enough to tie a turn to a belief (not a stop or function word, in
    English or another language)."""
    return (
        len(word) > 1
        and word not in STOP_WORDS
        and not is_function_word(word)
        and not is_function_word_elsewhere(word)
    )


def query_words(cleaned: str) -> list[str]:
    """Words of a cleaned query, lower-cased, edge punctuation and possessives stripped."""
    return [word for word, _ in written_words(cleaned)]


def written_words(text: str) -> list[tuple[str, bool]]:
    """Each word of `text` (as `query_words` gives them) and whether it is written as a name.

    A name-like form is a capital letter where a sentence does not start ("rewrite it in Go")
    or past a word's first letter ("TS", "GitHub"). A text written all in capitals marks
    nothing: its capitals say nothing about any one word.
    """
    return read_text(text)[0]


def read_text(text: str) -> tuple[list[tuple[str, bool]], tuple[tuple[str, ...], ...]]:
    """`written_words` and `name_runs` of `text`, read in one pass over its words."""
    shouting = text.upper() == text
    out: list[tuple[str, bool]] = []
    runs: list[tuple[str, ...]] = []
    run: list[str] = []
    titled = 0
    sentence_start = True
    held: tuple[str, bool] | None = None  # a sentence's first word, if a name's first word
    for raw in text.split():
        word, inner, first, ends = _read_word(raw)
        starts = sentence_start
        sentence_start = ends
        if word:
            out.append((word, not shouting and (inner or (first and not starts))))
        if shouting:
            continue
        in_name = bool(word) and first and not starts and word not in CALENDAR
        if in_name:
            if held is not None and not run and not is_common(word):  # "Kasia Kowalska gra…"
                run.append(held[0])
                titled += held[1]
            run.append(word)
            titled += not inner
        named = first and starts and len(word) > 2 and not raw.endswith(_POSSESSIVE_ENDS)
        held = (word, not inner) if named and _may_name(word) else None
        if not in_name or raw[-1] in RUN_BREAKS:  # "ask Maya, Tomás and Gary": three names
            if len(run) > 1 and titled:
                runs.append(tuple(run))
            run, titled = [], 0
    if len(run) > 1 and titled:
        runs.append(tuple(run))
    return out, tuple(runs)


def _may_name(word: str) -> bool:
    """Whether a capitalised word that starts a sentence may be a name's first word, with a
    name no dictionary lists after it ("Kasia Kowalska gra…", not "Redis Cluster keeps…"): no
    everyday English word nor function word ("Tell Marta", "Can Sarah", "Das Lager"); one with
    its "'s" is the turn's subject, a name of its own ("Leo's Year 9 trip")."""
    return (
        word not in CALENDAR
        and not is_common(word)
        and not is_function_word(word)
        and not is_function_word_elsewhere(word)
    )


@lru_cache(maxsize=65_536)
def _read_word(raw: str) -> tuple[str, bool, bool, bool]:
    """One whitespace-separated piece of text: its word ("" for none: punctuation, a number),
    whether a capital follows its first letter, whether its first letter is one, and whether
    it ends a sentence. Turns repeat their words, so each piece is read once."""
    stripped = raw.lstrip(LEAD_PUNCT).rstrip(TRAIL_PUNCT)
    stripped = _without_possessive(stripped).rstrip(TRAIL_PUNCT)
    if ":" in stripped:
        stripped = _without_case_ending(stripped)
    ends = raw.rstrip("\"')]}*_”’»").endswith((".", "!", "?", ":"))
    word = stripped.lower()
    if number_term(stripped):
        return word, False, False, ends
    if not word or _BARE_NUMBER.match(word):  # "(2024)" is a number too
        return "", False, False, ends
    if not (word.isalnum() or any(ch.isalnum() for ch in word)):
        return "", False, False, ends
    capitals = [ch.isupper() for ch in stripped]
    return word, any(capitals[1:]), capitals[0], ends


# An abbreviation with a case ending after a colon, as Finnish and Swedish write one:
# "W&B:hen", "EM:n", "API:ssa", "SVT:s"
_CASE_ENDING = re.compile(r"^([A-Z0-9][\w&+#.-]*):([^\W\d_]{1,5})$")


def _without_case_ending(word: str) -> str:
    """`word` without a case ending written after a colon on an abbreviation ("EM:n" is
    "EM"); any other word as it is ("Error:invalid", "note:this")."""
    match = _CASE_ENDING.match(word)
    if match is None or not match.group(2).islower():
        return word
    name = match.group(1)
    upper = sum(ch.isupper() for ch in name)
    return name if upper >= sum(ch.islower() for ch in name) else word


# Capitalised by convention, not as part of a name: "Brightwater's March trial balance",
# "tell Gwen I'm away"
_MONTHS = "january february march april may june july august september october november december"
_DAYS = "monday tuesday wednesday thursday friday saturday sunday"
_I = "i i'm i've i'll i'd i’m i’ve i’ll i’d"
CALENDAR = frozenset(f"{_MONTHS} {_DAYS} {_I}".split())


def name_runs(text: str) -> tuple[tuple[str, ...], ...]:
    """Runs of two or more adjacent words each written with a capital where no sentence
    starts: one name of several words ("Gary Lineker", "Tesla's Sentry Mode", "the
    California Zephyr"). An all-capital word ("AQA") joins a run but does not start one
    alone; a text written all in capitals has none."""
    return read_text(text)[1]


_CODE_SPAN_WORDS = 3  # a longer span is code, not a name
_NAME_LIKE = re.compile(r"^[a-z][a-z0-9+#.-]*$")  # `make`, `next.js`; not `connect()`


def code_words(text: str) -> list[str]:
    """Words of short inline code spans (`make`, `go test`): names written as code.

    `clean_query` drops code; a span of a few words is kept here as a strong sign that the
    word is meant as a name.
    """
    if "`" not in text:
        return []
    out: list[str] = []
    for match in _INLINE_CODE.finditer(_FENCED.sub(" ", text) if "``" in text else text):
        span = match.group(0).strip("`")
        words = query_words(span)
        if 0 < len(words) <= _CODE_SPAN_WORDS and all(map(_NAME_LIKE.match, words)):
            out.extend(words)
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
    # words written as names (code spans, capitals where a sentence does not start)
    marked: frozenset[str] = frozenset()
    # words read out of code: identifiers, paths, code spans and blocks, split into their words
    coded: frozenset[str] = frozenset()
    code_phrases: tuple[str, ...] = ()  # an identifier's words as a phrase ("feature flags")
    other_script: bool = False  # the turn holds Hangul, kana or Han
    figures: frozenset[str] = frozenset()  # its figures as written (`numbers.figures`)
    # names of several capitalised words ("Gary Lineker", "Sentry Mode"), `name_runs`
    runs: tuple[tuple[str, ...], ...] = ()
    # the turn's words in order with each hyphenated word's parts in its place ("the
    # going-home sheet" -> the going home sheet), when it has one: phrases of its parts
    spaced: tuple[str, ...] = ()
    # the languages besides English the turn is written in (`lexicon.turn_languages`)
    languages: frozenset[str] = frozenset()
    # words written in mixed case, a capital right after a small letter ("BaFin", "eID"),
    # alone or as a hyphenated word's part: how a name is written, not an everyday word
    mixed: frozenset[str] = frozenset()
    # words with a Turkish case ending after an apostrophe (`suffixed_names`): names
    suffixed: frozenset[str] = frozenset()

    @property
    def empty(self) -> bool:
        return not self.words

    def phrases_of(self, n: int) -> list[str]:
        """Distinct n-word phrases of the whole word sequence (for aliases), and identifiers'
        words as phrases."""
        found = dict.fromkeys(ngrams(self.sequence, n))
        if self.spaced:
            found.update(dict.fromkeys(ngrams(self.spaced, n)))
        found.update((p, None) for p in self.code_phrases if p.count(" ") == n - 1)
        return list(found)

    def canonical_phrases_of(self, n: int) -> list[str]:
        """Distinct n-word phrases of the stop-worded sequence (for canonical names)."""
        found = dict.fromkeys(ngrams(self.content, n))
        if self.spaced:
            content = [w for w in self.spaced if w not in STOP_WORDS]
            found.update(dict.fromkeys(ngrams(content, n)))
        return list(found)

    @property
    def phrases(self) -> tuple[str, ...]:
        return tuple(p for n in range(2, MAX_NGRAM + 1) for p in self.phrases_of(n))

    @property
    def canonical_phrases(self) -> tuple[str, ...]:
        return tuple(p for n in range(2, MAX_NGRAM + 1) for p in self.canonical_phrases_of(n))


# A host's own name, before its top-level domain, is written as a name: "sentry" of
# "sentry.io" or "https://acme.sentry.io/issues/1", "gmail" of "bob@gmail.com". The domains are
# those of services and products: ".py" or ".md" end file names.
_HOST = re.compile(
    r"^(?:https?://)?(?:[\w-]+[.@])*?([a-z][a-z0-9-]*)"
    r"\.(?:io|com|dev|app|ai|so|co|net|org|sh|cloud|tech|xyz)(?:/|$)"
)


# Symbols typed against a word: emoji (with their joiners and variation selectors), ™ and ®
_SYMBOLS = re.compile(
    "[\u00a9\u00ae\u2100-\u214f\u2190-\u21ff\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff"
    "\ufe0f\u200d\U0001f000-\U0001faff]"
)
_LISTED = re.compile(r"(?<=[^\W\d_]),(?=[^\W\d_])")  # "kafka,flink": a list without spaces


def typed_text(text: str) -> str:
    """A turn's text as its words are read: full-width and compatibility forms as their plain
    letters (NFKC), a symbol against a word ("shipped🚀", "Kafka™") and a comma between two
    words ("kafka,flink") as a space."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", _SYMBOLS.sub(" ", text))
    if "," in text:
        text = _LISTED.sub(" ", text)
    return text


# A name with its version typed against it ("node18", "python3.12", "c++20", "java17"): the
# name is a word of the turn, written as a name (a version names a kind of the thing).
_VERSIONED = re.compile(r"^([^\W\d_][^\W\d]*?[^\W\d_+#]*[+#]*)(\d{1,3}(?:\.\d{1,3}){0,2})$")


def parse_query(text: str) -> QueryTerms:
    text = typed_text(text)
    cleaned = clean_query(text)
    written, runs = read_text(cleaned)
    coded = code_words(text)
    words = [w for w, _ in written]
    spaced = spaced_parts(words) if "-" in cleaned or "_" in cleaned else ()
    in_code, code_phrases, pinned = code_terms(text)
    marked = {w for w, named in written if named} | set(coded) | set(pinned)
    marked |= {m.group(1) for w in in_code if (m := _HOST.match(w))}
    words += [w for w in coded if w not in words]  # code spans are cleaned away: add them
    seen = set(words)
    words += [w for w in in_code if w not in seen]
    seen.update(in_code)
    parts = joined_parts(words, text)
    words += [p for p in dict.fromkeys(parts) if p not in seen]  # "dagster-dbt", "BaFin-Auflagen"
    suffixed: frozenset[str] = frozenset()
    if "'" in cleaned or "’" in cleaned:
        suffixed, after_names = suffixed_names(cleaned)
        runs += after_names
    versioned = [
        m.group(1)
        for w in words
        if w[-1:].isdigit() and (m := _VERSIONED.match(w)) and len(m.group(1)) > 1
    ]  # a version ends in a digit: the pattern's backtracking is spared every other word
    words += [v for v in dict.fromkeys(versioned) if v not in seen and v not in parts]
    marked.update(versioned)
    return QueryTerms(
        cleaned=cleaned,
        words=tuple(dict.fromkeys(words)),
        sequence=tuple(words),
        content=tuple(w for w in words if w not in STOP_WORDS),
        marked=frozenset(marked),
        coded=frozenset([*in_code, *versioned]),
        code_phrases=tuple(code_phrases),
        other_script=has_other_script(text),
        figures=figures(text),
        runs=runs,
        spaced=spaced,
        # a function word is never written as a name ("Dan and Tim" are no Indonesian)
        languages=turn_languages(w for w, named in written if not named),
        mixed=_mixed_case(text),
        suffixed=suffixed,
    )


# a word with a small letter right before a capital: "BaFin", "eID", "GitHub"; not "APIs"
_MIXED = re.compile(r"[^\W\d_]*[a-z][A-Z][^\W\d_]*")


_HUMP = re.compile(r"[a-z][A-Z]")


def _mixed_case(text: str) -> frozenset[str]:
    """The words of `text` written in mixed case (`QueryTerms.mixed`), lower-cased."""
    if _HUMP.search(text) is None:  # most turns: no word to look for
        return frozenset()
    return frozenset(w.lower() for w in _MIXED.findall(text))
