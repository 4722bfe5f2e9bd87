"""One user's search postings: canonical names, aliases, fuzzy keys, stems and name words.

Canonical names and aliases (rejected alternatives included) are each indexed as one whole
token; alias tokens also get their one-deletion variants so fuzzy lookups are dictionary
probes, not scans.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left, insort
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from beliefs.index.fuzzy_keys import FuzzyKeys
from beliefs.index.indexed_doc import (
    FUZZY_PREFIX,
    IndexedDoc,
    PinnedKey,
    deletion_variants,
    pinned_order,
)
from beliefs.index.postings import SMALL_POSTING, Members, join, members, put, take
from beliefs.text.folding import folds, marked_apart
from beliefs.text.identifiers import has_other_script
from beliefs.text.lexicon import COMMON_ZIPF, stem, stem_phrase, zipf, zipf_in_script
from beliefs.text.query import STOP_WORDS

# An alias's posting: its one belief, its few beliefs in a tuple, or more by their alias count
# (BM25's length norm is one number per count, so a group scores at one rate): a dict costs
# over 200 bytes, and most aliases belong to a few beliefs.
AliasPosting = str | tuple[str, ...] | dict[int, Members]
StemKind = Literal["canonical", "alias"]
MAX_CACHED_STEMS = 50_000
# A name word is looked up only while it is in at most MAX_NAME_WORD_NAMES canonical names (the
# kind of that many things names none of them: `beliefs.search.kind_words`). Past NAME_WORD_HELD
# only its count is held, and its names are found again if it falls back to MAX_NAME_WORD_NAMES.
MAX_NAME_WORD_NAMES = 8
NAME_WORD_HELD = 64
CHANGES = itertools.count(1)  # each change of any user's postings takes the next number
# The index stems each of its tokens when it comes, through the stemmer itself: `stem`'s cache
# is for the words of turns, and a store's names would fill it (~0.4 KB an entry, 45 MB at
# 100k beliefs) with words a turn may never hold.
_stem_word = stem.__wrapped__


def index_stem(token: str) -> str:
    """`stem_phrase(token)`, leaving the lexicon's caches as they are."""
    return " ".join(map(_stem_word, token.split(" ")))


def name_words(canonical: str) -> list[str]:
    """Stems of the words of a multi-word canonical name that may match alone.

    A number is never one ("16" of `postgres_16`): a turn's words hold no numbers
    (`beliefs.text.query`), so a number here could never be looked up, only cost memory.
    """
    words = canonical.split(" ")
    if len(words) < 2:
        return []
    return list(
        dict.fromkeys(
            _stem_word(w)
            for w in words
            if len(w) > FUZZY_PREFIX and w not in STOP_WORDS and not w.isdigit()
        )
    )


# Digits that say a year, an ordinal, a measure or a price, not which thing: "2026 fee
# increase", "6th edition", "340g jar", "₹999 plan"
_NOT_A_CODE = re.compile(
    r"^(?:(?:19|20)\d\d|\d+(?:st|nd|rd|th|s)|[\d.,]+(?:mm|cm|km|kg|g|mg|ml|l|gb|mb|tb|k|m|s|h|x|px"
    r"|hz|khz|mhz|ghz|w|kw|v|mah|kwh|p|%))$"
)


# Titles before a surname: "Dr Frost" is called "Frost" as often as not
_HONORIFICS = frozenset(["dr", "mr", "mrs", "ms", "miss", "prof", "professor", "sir", "dame"])


def code_parts(token: str) -> tuple[str, ...]:
    """The words of an alias of several words that name it alone, though the turn writes them
    apart from its other words: codes holding a digit, three characters or more, that are no
    year, ordinal, measure or price ("842" of "ASC 842", "8606" of "Form 8606", "msg91" of
    "MSG91 SMS"; not "2026" of "2026 fee increase" nor "340g" of "340g jar"), words of three
    letters or more rarer than an everyday word or a common name ("trados" of "Trados Studio",
    "crashlytics" of "Firebase Crashlytics", "kpi" of "KPI dashboard"; not "studio"), and the
    surname after a title ("frost" of "Dr Frost", "bishop" of "Mr Bishop")."""
    if " " not in token:
        return ()
    words = token.split(" ")
    if len(words) == 2 and words[0] in _HONORIFICS and len(words[1]) > 2:
        return (words[1],)
    return tuple(w for w in dict.fromkeys(words) if _code(w) or _rare_word(w))


def rejected_words(doc: IndexedDoc) -> frozenset[str]:
    """The first words of the belief's rejected alternatives of several words, by which a turn
    proposing the option may name it alone ("plastic" of "Plastic SCM / Unity Version
    Control", "tortoise" of "Tortoise ORM", "paper" of "paper filing"): three letters or
    more, and no number or stop word ("0.9% saline" gives none)."""
    firsts = (option.split(maxsplit=2) for option in doc.belief.rejected_alternatives)
    return frozenset(
        word
        for first in firsts
        if len(first) > 1
        and len(word := first[0].lower()) >= 3
        and word.isalpha()
        and word not in STOP_WORDS
    )


def _code(word: str) -> bool:
    return (
        len(word) >= 3
        and any(ch.isdigit() for ch in word)
        and all(ch.isalnum() or ch in ".-" for ch in word)
        and not _NOT_A_CODE.match(word)
    )


def _rare_word(word: str) -> bool:
    # in another script, rare in its languages too: "για" of "διαμέρισμα για airbnb" is "for"
    return (
        len(word) >= 3
        and word.isalpha()
        and word not in STOP_WORDS
        and zipf(word) < COMMON_ZIPF
        and (zipf_in_script(word) or 0.0) < COMMON_ZIPF
    )


@dataclass
class UserPostings:
    """Postings of one user's beliefs: BM25 statistics are per user.

    A posting holds a lone member as itself (`Members`); read one through `members`, and an
    alias's through `alias_ids`/`alias_groups`. Stems are held only where they differ from the
    token: `stem_matches` adds the token itself.
    """

    docs: dict[str, IndexedDoc] = field(default_factory=dict)
    canonical: dict[str, Members] = field(default_factory=dict)  # canonical token -> ids
    aliases: dict[str, AliasPosting] = field(default_factory=dict)  # alias token -> ids
    # one-word tokens by the hash of each deletion variant: a collision only adds a candidate
    # the caller verifies (packed: `beliefs.index.fuzzy_keys`)
    deletes: FuzzyKeys = field(default_factory=FuzzyKeys)
    ends: dict[tuple[int, str, str], Members] = field(default_factory=dict)  # phrase tokens
    sizes: dict[int, int] = field(default_factory=dict)  # alias tokens by word count
    # alias tokens written in Hangul, kana or Han: found inside a turn's unspaced text
    script_aliases: set[str] = field(default_factory=set)
    alias_docs: int = 0
    alias_len_sum: int = 0
    name_sizes: dict[int, int] = field(default_factory=dict)  # canonical tokens by word count
    pinned: set[str] = field(default_factory=set)  # pinned or delivery=always
    # the same beliefs in the pinned layer's order, by `pinned_order`: kept sorted as beliefs
    # come and go, so a user's standing layers are a pass over them, not a sort
    pinned_order: list[PinnedKey] = field(default_factory=list)
    # each scope list the user's beliefs hold, with how many hold it: a store has few, and a
    # rule weighs a belief by its scopes, so the most it weighs any of them is the most of these
    scopes: dict[tuple[str, ...], int] = field(default_factory=dict)
    alias_stems: dict[str, Members] = field(default_factory=dict)  # stemmed -> alias tokens
    # an alias token's form without accents or apostrophes, where it has one -> the tokens
    folded: dict[str, Members] = field(default_factory=dict)
    canonical_stems: dict[str, Members] = field(default_factory=dict)  # stemmed -> canonical
    # name word stem -> the canonical tokens holding it, or past NAME_WORD_HELD only how many
    name_words: dict[str, Members | int] = field(default_factory=dict)
    # a code of an alias of several words ("842" of "ASC 842", "msg91" of "MSG91 SMS") -> the
    # alias tokens holding it (`code_parts`)
    parts: dict[str, Members] = field(default_factory=dict)
    # the first word of a rejected alternative of several words ("plastic" of "Plastic SCM")
    # -> the beliefs that rejected it: a turn proposing the option may name it by that alone
    rejected_words: dict[str, Members] = field(default_factory=dict)
    stem_cache: dict[tuple[StemKind, str], tuple[str, ...]] = field(default_factory=dict)
    # The number of this user's last change (no other change has it; 0: none yet), and the
    # views worked out from this user's beliefs since: another user's writes leave them be.
    version: int = 0
    derived: dict[object, object] = field(default_factory=dict)
    # views worked out from the pinned beliefs alone (the standing layers): they outlive
    # writes of the user's other beliefs
    standing: dict[object, object] = field(default_factory=dict)

    def add(self, doc: IndexedDoc) -> None:
        bid = doc.belief.id
        self.version = next(CHANGES)
        if self.stem_cache:
            self.stem_cache.clear()
        if self.derived:
            self.derived.clear()
        pinned = doc.belief.pinned or doc.belief.delivery == "always"
        if pinned and self.standing:
            self.standing.clear()
        self.docs[bid] = doc
        scopes = doc.belief.scope
        self.scopes[scopes] = self.scopes.get(scopes, 0) + 1
        if doc.canonical not in self.canonical:
            _count(self.name_sizes, doc.canonical, 1)
            _put_stem(self.canonical_stems, doc.canonical)
            for word in name_words(doc.canonical):
                self._put_name_word(word, doc.canonical)
        put(self.canonical, doc.canonical, bid)
        length = len(doc.aliases)
        for word in rejected_words(doc):
            put(self.rejected_words, word, bid)
        for token in doc.aliases:
            posting = self.aliases.get(token)
            if posting is None:
                for key in _fuzzy_keys(token):
                    if isinstance(key, int):
                        self.deletes.put(key, token)
                    else:
                        put(self.ends, key, token)
                _count(self.sizes, token, 1)
                _put_stem(self.alias_stems, token)
                for folded in folds(token):
                    put(self.folded, folded, token)
                if not token.isascii() and has_other_script(token):
                    self.script_aliases.add(token)
                for part in code_parts(token):
                    put(self.parts, part, token)
                self.aliases[token] = bid
            elif isinstance(posting, str):
                if posting != bid:
                    self.aliases[token] = (posting, bid)
            elif isinstance(posting, tuple):
                if bid not in posting:
                    if len(posting) < SMALL_POSTING:
                        self.aliases[token] = (*posting, bid)
                    else:
                        self.aliases[token] = self._grouped((*posting, bid))
            else:
                join(posting, length, bid)
        if doc.aliases:
            self.alias_docs += 1
            self.alias_len_sum += len(doc.aliases)
        if pinned:
            self.pinned.add(bid)
            insort(self.pinned_order, pinned_order(doc))

    def discard(self, bid: str) -> None:
        doc = self.docs.pop(bid, None)
        if doc is None:
            return
        self.version = next(CHANGES)
        self.stem_cache.clear()
        self.derived.clear()
        scopes = doc.belief.scope
        if self.scopes[scopes] > 1:
            self.scopes[scopes] -= 1
        else:
            del self.scopes[scopes]
        take(self.canonical, doc.canonical, bid)
        if doc.canonical not in self.canonical:
            _count(self.name_sizes, doc.canonical, -1)
            _take_stem(self.canonical_stems, doc.canonical)
            for word in name_words(doc.canonical):
                self._take_name_word(word, doc.canonical)
        length = len(doc.aliases)
        for word in rejected_words(doc):
            take(self.rejected_words, word, bid)
        for token in doc.aliases:
            posting = self.aliases.get(token)
            if posting is None:
                continue
            if isinstance(posting, dict):
                take(posting, length, bid)
                if self.alias_df(token) <= SMALL_POSTING:
                    self.aliases[token] = tuple(self.alias_ids(token))
            elif isinstance(posting, tuple):
                left = tuple(b for b in posting if b != bid)
                self.aliases[token] = left if len(left) > 1 else left[0]
            elif posting == bid:
                del self.aliases[token]
            if token not in self.aliases:
                _count(self.sizes, token, -1)
                _take_stem(self.alias_stems, token)
                for folded in folds(token):
                    take(self.folded, folded, token)
                self.script_aliases.discard(token)
                for part in code_parts(token):
                    take(self.parts, part, token)
                for key in _fuzzy_keys(token):
                    if isinstance(key, int):
                        self.deletes.take(key, token)
                    else:
                        take(self.ends, key, token)
        if doc.aliases:
            self.alias_docs -= 1
            self.alias_len_sum -= len(doc.aliases)
        if bid in self.pinned:
            self.standing.clear()
            self.pinned.discard(bid)
            place = pinned_order(doc)
            at = bisect_left(self.pinned_order, place)
            if at < len(self.pinned_order) and self.pinned_order[at] == place:
                del self.pinned_order[at]

    def _put_name_word(self, word: str, canonical: str) -> None:
        held = self.name_words.get(word)
        if isinstance(held, int):
            self.name_words[word] = held + 1
        elif held is not None and len(members(held)) >= NAME_WORD_HELD:
            self.name_words[word] = NAME_WORD_HELD + 1
        else:
            put(self.name_words, word, canonical)  # type: ignore[arg-type]

    def _take_name_word(self, word: str, canonical: str) -> None:
        held = self.name_words.get(word)
        if not isinstance(held, int):
            take(self.name_words, word, canonical)  # type: ignore[arg-type]
        elif held - 1 > MAX_NAME_WORD_NAMES:
            self.name_words[word] = held - 1
        else:  # few enough to be looked up again: its names, from the names held
            del self.name_words[word]
            for token in self.canonical:
                if token != canonical and word in name_words(token):
                    put(self.name_words, word, token)  # type: ignore[arg-type]

    def scope_share(self, scope: str) -> float:
        """The share of the user's beliefs that `scope` is one of the scopes of."""
        held = sum(n for scopes, n in self.scopes.items() if scope in scopes)
        return held / len(self.docs) if self.docs else 0.0

    @property
    def avg_alias_len(self) -> float:
        return self.alias_len_sum / self.alias_docs if self.alias_docs else 1.0

    def _grouped(self, ids: Iterable[str]) -> dict[int, Members]:
        """A large alias posting: its beliefs by their alias count."""
        groups: dict[int, Members] = {}
        for bid in ids:
            join(groups, len(self.docs[bid].aliases), bid)
        return groups

    def canonical_ids(self, token: str) -> Collection[str]:
        """The beliefs whose canonical name is `token`."""
        return members(self.canonical.get(token))

    def alias_ids(self, token: str) -> Collection[str]:
        """The beliefs holding the alias (or rejected alternative) `token`."""
        posting = self.aliases.get(token)
        if not isinstance(posting, dict):
            return members(posting)
        if len(posting) == 1:
            return members(next(iter(posting.values())))
        return [bid for ids in posting.values() for bid in members(ids)]

    def alias_df(self, token: str) -> int:
        """How many beliefs hold the alias `token`."""
        posting = self.aliases.get(token)
        if not isinstance(posting, dict):
            return len(members(posting))
        return sum(1 if isinstance(ids, str) else len(ids) for ids in posting.values())

    def alias_groups(self, token: str) -> Iterator[tuple[int, Collection[str]]]:
        """The beliefs holding the alias `token`, grouped by how many aliases each has (the
        BM25 length norm is the same within a group)."""
        posting = self.aliases.get(token)
        if posting is None:
            return
        if isinstance(posting, str):
            yield len(self.docs[posting].aliases), (posting,)
            return
        groups = self._grouped(posting) if isinstance(posting, tuple) else posting
        for length, ids in groups.items():  # a few beliefs (a tuple) are grouped when read
            yield length, members(ids)

    def stem_matches(self, kind: StemKind, query: str) -> tuple[str, ...]:
        """Canonical or alias tokens whose stem is the stem of `query` (kept per query term
        until the postings change: turns repeat their words and phrases)."""
        key = (kind, query)
        found = self.stem_cache.get(key)
        if found is None:
            stems, exact = (
                (self.canonical_stems, self.canonical)
                if kind == "canonical"
                else (self.alias_stems, self.aliases)
            )
            stemmed = stem_phrase(query)
            found = tuple(members(stems.get(stemmed)))
            if stemmed in exact and stem_phrase(stemmed) == stemmed:
                found += (stemmed,)
            if len(self.stem_cache) >= MAX_CACHED_STEMS:
                self.stem_cache.clear()
            self.stem_cache[key] = found
        return found

    def folded_like(self, term: str) -> tuple[str, ...]:
        """Alias tokens besides `term` that are `term` typed with or without accents and
        apostrophes ("cafe nero" for "café nero", "oreilly" for "o'reilly", "zürich" for
        "zurich"), or with its umlauts written out ("mueller" for "müller"): the same name
        (`beliefs.text.folding.folds`)."""
        found: dict[str, None] = {}
        for key in folds(term, keep=True):
            found.update((token, None) for token in members(self.folded.get(key)) if token != term)
            if key != term and key in self.aliases:
                found[key] = None
        return tuple(token for token in found if not marked_apart(term, token))

    def alias_candidates(self, term: str, *, fuzzy: bool) -> Iterator[str]:
        """Alias tokens equal to `term` or, with `fuzzy`, possibly one edit away (verify!).

        One-word tokens are found through their deletion variants. A phrase one edit away
        keeps either its first or its last word intact, so phrases are found by those.
        """
        if term in self.aliases:
            yield term
        if not fuzzy or len(term) <= FUZZY_PREFIX:
            return
        seen = {term}
        words = term.split(" ")
        if len(words) > 1:
            first = (len(words), "first", words[0])
            last = (len(words), "last", words[-1])
            for token in (*members(self.ends.get(first)), *members(self.ends.get(last))):
                if token not in seen:
                    seen.add(token)
                    yield token
            if len(words) == 2:  # one word, joined, hyphenated or dotted: "gluten free",
                # "on call", "next js"
                joined = (words[0] + words[1], words[0] + "-" + words[1], words[0] + "." + words[1])
                for token in joined:
                    if token in self.aliases and token not in seen:
                        seen.add(token)
                        yield token
            return
        probes = deletion_variants(term)
        for variant in (term, *probes):
            for token in members(self.deletes.get(hash(variant))):
                if token not in seen:
                    seen.add(token)
                    yield token
        for variant in probes:
            if variant not in seen and variant in self.aliases:
                seen.add(variant)
                yield variant


def _put_stem(stems: dict[str, Members], token: str) -> None:
    stemmed = index_stem(token)
    if stemmed != token:
        put(stems, stemmed, token)


def _take_stem(stems: dict[str, Members], token: str) -> None:
    stemmed = index_stem(token)
    if stemmed != token:
        take(stems, stemmed, token)


def _fuzzy_keys(token: str) -> list[int | tuple[int, str, str]]:
    words = token.split(" ")
    if len(words) > 2:
        return [(len(words), "first", words[0]), (len(words), "last", words[-1])]
    if len(words) == 2:  # and written as one word: "steamdeck" for "steam deck"
        return [(2, "first", words[0]), (2, "last", words[-1]), hash(words[0] + words[1])]
    return [hash(variant) for variant in deletion_variants(token)]


def _count(sizes: dict[int, int], token: str, change: int) -> None:
    """Keep `sizes` (distinct tokens by the word counts a turn may write them in) in step;
    counts that reach 0 go. A word joined by a hyphen or a stop, or a name with its number,
    counts for two words as well: "gluten free", "next js" and "dac 8" are typed for
    "gluten-free", "next.js" and "DAC8"."""
    words = token.count(" ") + 1
    for size in (1, 2) if words == 1 and _JOINED.search(token) else (words,):
        left = sizes.get(size, 0) + change
        if left:
            sizes[size] = left
        else:
            sizes.pop(size, None)


_JOINED = re.compile(r"\w[-.]\w|[^\W\d]{2}\d")  # "next.js", "on-call", "dac8"
