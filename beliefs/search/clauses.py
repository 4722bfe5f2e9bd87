"""Which names of the user's beliefs a turn holds: the clauses of alias-weighted BM25.

Canonical name words and phrases match exactly or by Snowball stem; aliases and rejected
alternatives exactly, by stem, or one edit away with the same two-character prefix. Each
matched token keeps its best BM25 clause score (boost × idf × similarity) and the turn's word
that reached it. What the clauses add up to, and whether a belief is returned, is decided
later (`beliefs.search.relevance`, or the rules of `beliefs.search.accumulate`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from beliefs.index.bm25 import TF_NORM_ONE, idf, label, similarity, within_one_edit
from beliefs.index.indexed_doc import FUZZY_PREFIX
from beliefs.index.postings import members
from beliefs.index.user_postings import UserPostings
from beliefs.search.hits import Match
from beliefs.search.switching import asks_to_switch
from beliefs.text.identifiers import split_scripts
from beliefs.text.lexicon import (
    has_other_sense,
    in_dictionary,
    is_common,
    is_function_word_in,
    stem,
)
from beliefs.text.query import MAX_NGRAM, STOP_WORDS, QueryTerms, is_telling

MIN_SCORE = 3.0
# BM25 needs a corpus: below this many beliefs the document count is floored, so a new
# user's first beliefs are found by one alias instead of all sinking under MIN_SCORE.
MIN_CORPUS = 32
BOOST_CANONICAL_WORD = 14.0
BOOST_CANONICAL_PHRASE = 14.0
BOOST_ALIAS_WORD = 5.0
BOOST_ALIAS_PHRASE = 14.0
STEM_FACTOR = 0.8  # a stemmed match scores this share of the exact one

Matched = dict[str, tuple[float, str, str, Match, str]]


def match_canonical(
    postings: UserPostings, terms: QueryTerms, n: int, extended: bool = True
) -> Matched:
    matched: Matched = {}
    phrases = [
        p for size in _phrase_sizes(postings.name_sizes) for p in terms.canonical_phrases_of(size)
    ]
    for words, boost in (
        (terms.words, BOOST_CANONICAL_WORD),
        (phrases, BOOST_CANONICAL_PHRASE),
    ):
        for word in words:
            ids = postings.canonical_ids(word)
            if ids and word not in matched:
                base = boost * idf(n, len(ids)) * TF_NORM_ONE
                matched[word] = (base, "canonical_name", word, "exact", word)
    if not extended:
        return matched
    for words, boost in (
        (terms.words, BOOST_CANONICAL_WORD),
        (phrases, BOOST_CANONICAL_PHRASE),
    ):
        for word in words:
            for token in postings.stem_matches("canonical", word):
                if token not in matched and _prefix_ok(word, token):
                    df = len(postings.canonical_ids(token))
                    base = boost * STEM_FACTOR * idf(n, df) * TF_NORM_ONE
                    matched[token] = (base, "canonical_name", label(word, token), "stemmed", word)
    return matched


def _prefix_ok(query: str, token: str) -> bool:
    return query[:FUZZY_PREFIX] == token[:FUZZY_PREFIX]


def _phrase_sizes(sizes: dict[int, int]) -> list[int]:
    """The phrase lengths worth forming: those some indexed token has (in ascending order)."""
    return [n for n in range(2, MAX_NGRAM + 1) if n in sizes]


TermMatches = dict[str, tuple[tuple[str, int], ...]]  # query term -> (alias token, edits)
FOLDED = -1  # the edits of an alias token the term is when typed with or without accents
MAX_CACHED_TERMS = 50_000


def _alias_matches(
    postings: UserPostings, query: str, cache: TermMatches
) -> tuple[tuple[str, int], ...]:
    """Alias tokens equal to `query`, or one edit away with the same two-character prefix, or
    `query` typed with or without accents and apostrophes (counted as one edit).

    Turns repeat their words ("the", "deploy", "redis"), so results are kept per query term
    until the user's beliefs change (the cache lives in the user's derived views).
    """
    found = cache.get(query)
    if found is None:
        fuzzy = len(query) > FUZZY_PREFIX and not _numeric(query)
        # Typed without its accents a name is typed loosely, scored as one edit (an everyday
        # word so typed needs corroboration); a turn's word that is itself an alias is that one.
        alike = postings.folded_like(query) if query not in postings.aliases else ()
        out = [(token, FOLDED) for token in alike]
        for token in postings.alias_candidates(query, fuzzy=fuzzy):
            edits = within_one_edit(query, token)
            if edits is not None and query[:FUZZY_PREFIX] == token[:FUZZY_PREFIX]:
                out.append((token, edits))
        found = tuple(out)
        if len(cache) >= MAX_CACHED_TERMS:
            cache.clear()
        cache[query] = found
    return found


def match_aliases(
    postings: UserPostings, terms: QueryTerms, n: int, cache: TermMatches, extended: bool = True
) -> Matched:
    """Alias tokens the query names, each with its best-scoring query term."""
    matched: Matched = {}
    words = terms.words if 1 in postings.sizes else ()
    phrases = [p for size in _phrase_sizes(postings.sizes) for p in terms.phrases_of(size)]
    for queries, boost in ((words, BOOST_ALIAS_WORD), (phrases, BOOST_ALIAS_PHRASE)):
        for query in queries:
            found = cache.get(query)
            if found is None:
                found = _alias_matches(postings, query, cache)
            for token, edits in found:
                if edits == FOLDED:
                    if not extended:
                        continue  # the reference matches a name as it is written
                    edits = 1  # no typo, but scored as one edit
                elif edits and extended and _not_a_typo(query, token):
                    continue
                df = postings.alias_df(token)
                base = boost * idf(n, df) * similarity(query, token, edits)
                if token not in matched or base > matched[token][0]:
                    how: Match = "exact" if edits == 0 else "fuzzy"
                    matched[token] = (base, "alias", label(query, token), how, query)
    if not extended:
        return matched
    if terms.other_script and postings.script_aliases:
        _match_inside_scripts(postings, terms, n, matched)
    if postings.sizes.get(2) and not _CHANGES.isdisjoint(terms.sequence):
        _match_versions(postings, terms, n, matched)
    for queries, boost in ((words, BOOST_ALIAS_WORD), (phrases, BOOST_ALIAS_PHRASE)):
        for query in queries:
            for token in postings.stem_matches("alias", query):
                if token not in matched and _prefix_ok(query, token):
                    base = boost * STEM_FACTOR * idf(n, postings.alias_df(token))
                    matched[token] = (base, "alias", label(query, token), "stemmed", query)
    return matched


# A version: "22", "1.22", "v3.12.1"
_VERSION = re.compile(r"v?(\d+)((?:\.\d+)*)")
# An alias's word that stands for whichever version the turn names ("flutter version")
_VERSION_WORDS = frozenset(["version", "versão", "versión", "versione", "wersja"])
# Words that change a version: "bump node to 24", "upgrade python from 3.11 to 3.12"
_CHANGES = frozenset(
    [
        "bump",
        "bumping",
        "bumped",
        "upgrade",
        "upgrading",
        "upgraded",
        "update",
        "updating",
        "raise",
        "raising",
        "migrate",
        "migrating",
        "move",
        "moving",
        "pin",
        "pinning",
    ]
)


def _match_versions(postings: UserPostings, terms: QueryTerms, n: int, matched: Matched) -> None:
    """An alias of a name and its version ("node 22", "go 1.22") named with another version of
    the same form in a turn that changes one ("bump node to 24", "upgrade go from 1.22 to
    1.23"), or an alias of a name and the word "version" named with any version ("bump flutter
    to 3.29" for "flutter version"): the belief is the version in use, and the name alone
    ("node", "go", "flutter") is an everyday word. Scored as the alias one edit away."""
    seq = terms.sequence
    for i, word in enumerate(seq[:-1]):
        after = seq[i + 2] if seq[i + 1] in ("to", "from") and i + 2 < len(seq) else seq[i + 1]
        typed = _VERSION.fullmatch(after)
        if typed is None:
            continue
        for token in members(postings.ends.get((2, "first", word))):
            second = token.split(" ")[1]
            held = _VERSION.fullmatch(second)
            if token in matched or (held is None and second not in _VERSION_WORDS):
                continue
            if held is None or (
                len(held.group(1)) == len(typed.group(1))
                and bool(held.group(2)) == bool(typed.group(2))
            ):
                query = f"{word} {after}"
                base = BOOST_ALIAS_PHRASE * idf(n, postings.alias_df(token))
                base *= similarity(query, token, 1)
                matched[token] = (base, "alias", label(query, token), "fuzzy", query)


def match_parts(postings: UserPostings, terms: QueryTerms, n: int, matched: Matched) -> None:
    """Aliases of several words the turn names by a part of theirs alone (`code_parts`: "842"
    for "ASC 842", "the 8606" for "Form 8606", "Trados" for "Trados Studio"), or by the
    surname after a title ("ring Frost" for "Dr Frost"), into `matched` where the whole alias
    is not: a number or a surname is many things, so such a clause always needs corroboration
    (`beliefs.search.corroboration.needs_sense`: a capital where no sentence starts, the
    belief's world in the turn). A rare word names a belief by a part only when the part is
    that one belief's and the word names no belief by itself ("redis" is the cache's alias,
    not a part of the broker's "redis broker"; "dbt" of several beliefs' names is none). A
    stop or function word names nothing by joining a name's other words ("voor" of "commissie
    voor welstand"), nor by opening one in a turn of its language ("mijn" of "mijn duo" in a
    Dutch turn)."""
    parts = postings.parts
    for word in terms.words:
        held = parts.get(word)
        if held is None:
            continue
        tokens = members(held)
        if not is_telling(word):
            # a word of any sentence of the turn's language opens no name ("mijn duo" in a
            # Dutch turn); another joins none ("commissie voor welstand"), but may open or
            # close one ("dag naming" in an English turn)
            if word in STOP_WORDS or is_function_word_in(word, terms.languages):
                continue
            tokens = [t for t in tokens if t.startswith(f"{word} ") or t.endswith(f" {word}")]
        if not any(ch.isdigit() for ch in word) and (
            word in matched or not _one_holder(postings, tokens)
        ):
            continue
        for token in tokens:
            if token not in matched:
                base = BOOST_ALIAS_WORD * idf(n, postings.alias_df(token))
                matched[token] = (base, "alias", label(word, token), "part", word)


def match_rejected_words(
    postings: UserPostings, terms: QueryTerms, n: int, matched: Matched
) -> None:
    """Rejected alternatives of several words that a turn proposing an option names by a word
    of theirs alone ("ska vi flytta över till plastic" for "Plastic SCM / Unity Version
    Control", "should i just use oasis this once?" for "Oasis floral foam"), into `matched`
    where the whole is not. Asked only of a turn that asks to change to something
    (`beliefs.search.switching`); such a clause is a part's, so it counts only as the rejected
    option the turn asks about (`beliefs.search.corroboration`)."""
    held = postings.rejected_words
    docs = postings.docs
    for word in terms.words:
        if asks_to_switch(word):  # "switching to Canon": the ask's own word
            continue
        bid = held.get(word)
        if not isinstance(bid, str) or not is_telling(word) or _names_another(postings, word):
            continue  # of several beliefs' options, or a name of the user's world: not one's
        doc = docs[bid]
        for token in doc.aliases[doc.alias_count :]:
            if token.startswith(f"{word} ") and token not in matched:
                base = BOOST_ALIAS_WORD * idf(n, postings.alias_df(token))
                matched[token] = (base, "alias", label(word, token), "part", word)


def _names_another(postings: UserPostings, word: str) -> bool:
    """Whether `word` is a name of the user's own, or a word of one: an alias, a part of
    one, or a word of a canonical name ("aws" of "AWS Lambda" beside the rejected "AWS p4d
    on-demand")."""
    return (
        word in postings.aliases
        or word in postings.parts
        or word in postings.canonical
        or stem(word) in postings.name_words
    )


def _one_holder(postings: UserPostings, tokens: Iterable[str]) -> bool:
    """Whether one belief holds all the alias `tokens` (read only until a second appears: a
    part of many beliefs' names is dropped at once)."""
    holder: str | None = None
    for token in tokens:
        for _, ids in postings.alias_groups(token):
            for bid in ids:
                if holder is None:
                    holder = bid
                elif bid != holder:
                    return False
    return True


def _match_inside_scripts(
    postings: UserPostings, terms: QueryTerms, n: int, matched: Matched
) -> None:
    """Aliases written in Hangul, kana or Han found inside the turn's words: Japanese and
    Chinese put no space between words, Korean joins particles to them ("保育園のお迎え",
    "풋살이랑"). A Latin part of such an alias ("Pマーク") starts where a word starts."""
    text = terms.cleaned.lower()
    for token in postings.script_aliases:
        if token in matched:
            continue
        needle = split_scripts(token)
        at = text.find(needle)
        while at >= 0 and not _bounded(text, at, needle):
            at = text.find(needle, at + 1)
        if at < 0:
            continue
        boost = BOOST_ALIAS_PHRASE if " " in needle else BOOST_ALIAS_WORD
        base = boost * idf(n, postings.alias_df(token))
        matched[token] = (base, "alias", token, "exact", token)


def _katakana(ch: str) -> bool:
    return "\u30a0" <= ch <= "\u30ff" or "\uff66" <= ch <= "\uff9f"


def _bounded(text: str, at: int, needle: str) -> bool:
    """Whether `needle` found at `at` stands as a word: a Latin end does not run on into
    letters, a katakana end not into more katakana ("ベース" is no word of "データベース")."""
    before = text[at - 1] if at > 0 else " "
    after = text[at + len(needle)] if at + len(needle) < len(text) else " "
    for ch, edge in ((before, needle[0]), (after, needle[-1])):
        if edge.isascii() and edge.isalnum() and ch.isalnum():
            return False
        if _katakana(edge) and _katakana(ch):
            return False
    return True


SHORT_TYPO = 4  # an alias this short one edit from a word is another word, save a plural


def _short(query: str, token: str) -> bool:
    """Whether a one-edit match is to an alias too short to tell a typo from another word
    ("wala" for "waba", "sls" for "slo"); its plural ("okrs" for "okr") is still the word."""
    return len(token) <= SHORT_TYPO and query != token + "s" and token != query + "s"


def _not_a_typo(query: str, token: str) -> bool:
    """Whether a one-edit match is another word than the alias (`_another_word`, `_short`,
    `_joined`); in a phrase, whether the word the edit is in is another word
    (`_another_in_phrase`: "them warehouse" is not "the warehouse", "the jcn" not "the SCN").
    A name typed apart is the name: its words written with a hyphen or a stop ("on call" for
    "on-call"), or written together where one is no everyday word ("dac 8" for "DAC8"; not "the
    fast lane" for the tool "fastlane")."""
    if _typed_apart(query, token):
        return False
    pair = _edited_word(query, token)
    if pair is not None and _another_in_phrase(*pair):
        return True
    return _another_word(query, token) or _short(query, token) or _joined(query, token)


def _typed_apart(query: str, token: str) -> bool:
    """Whether `query` is the one-word `token` typed apart (see `_not_a_typo`)."""
    if " " not in query or " " in token:
        return False
    unjoined = token.replace("-", "").replace(".", "")
    if query.replace(" ", "") != unjoined:
        return False
    return token != unjoined or not all(is_common(w) for w in query.split(" "))


def _another_in_phrase(word: str, alias_word: str) -> bool:
    """Whether a phrase's word one edit from the alias phrase's is another word: either is a
    stop word, it is an everyday word of another stem, or a short code with a letter changed
    (a letter dropped or added, "left kne" for "left knee", is a typo)."""
    return (
        word in STOP_WORDS
        or alias_word in STOP_WORDS
        or _another_word(word, alias_word)
        or (len(word) == len(alias_word) and _short(word, alias_word))
    )


def _edited_word(query: str, token: str) -> tuple[str, str] | None:
    """For two phrases of as many words that differ in one word: that word of `query` and the
    word of `token` in its place (None otherwise, and for single words)."""
    if " " not in query:
        return None
    mine, theirs = query.split(" "), token.split(" ")
    if len(mine) != len(theirs):
        return None
    pairs = [(a, b) for a, b in zip(mine, theirs, strict=True) if a != b]
    return pairs[0] if len(pairs) == 1 else None


def _joined(query: str, token: str) -> bool:
    """Whether the turn's word is a two-word alias written as one and a word of its own
    ("molehill" for "mole hill"; "steamdeck" is no word, so it is the alias)."""
    return " " in token and " " not in query and (in_dictionary(query) or has_other_sense(query))


def _another_word(query: str, token: str) -> bool:
    """Whether the turn's word, an edit from an alias, is an everyday word of another stem: the
    word meant, not a typo ("cells" for "cello", "Falcon" for "Falco"). The same word spelt
    the British or the American way is the same ("harbor point" for "Harbour Point")."""
    return (
        is_common(query)
        and stem(query) != stem(token)
        and _spelled_alike(query) != _spelled_alike(token)
    )


# British spellings and the American ones an edit away: "harbour", "centre", "organise"
_BRITISH = (
    (re.compile(r"(?<=[a-z]{3})our(?=s?$|ed$|ing$|ite|ful|less|able|side|ist)"), "or"),
    (re.compile(r"(?<=[a-z]{2}[tbg])re(?=s?$)"), "er"),
    (re.compile(r"(?<=[a-z]{3})([iy])s(?=e$|es$|ed$|ing$|ation|er$|ers$)"), r"\1z"),
)


@lru_cache(maxsize=50_000)  # asked of the same few words turn after turn
def _spelled_alike(word: str) -> str:
    """`word` in American spelling where British spelling writes it an edit apart."""
    for pattern, american in _BRITISH:
        word = pattern.sub(american, word)
    return word


def consumed(canonical: Matched, aliases: Matched) -> set[str]:
    """Query words that are part of a phrase some name matched ("pipeline" of "CI pipeline")."""
    return {w for m in (canonical, aliases) for *_, q in m.values() if " " in q for w in q.split()}


def within_phrases(
    postings: UserPostings, canonical: Matched, aliases: Matched
) -> dict[str, set[str]]:
    """The turn's words inside a phrase that a name matched whole ("fct" of `fct_events` for
    the alias "fct events", "panji" of `panji_2026.xlsx`) -> the beliefs of those phrases:
    such a word names that thing, not another belief's one-word alias of it (`drop_within`).
    Not a relation's name: it joins its participants' ("dagster-dbt" names Dagster and dbt
    too)."""
    out: dict[str, set[str]] = {}
    docs = postings.docs
    for matched, holders in ((canonical, postings.canonical_ids), (aliases, postings.alias_ids)):
        for token, (*_, query) in matched.items():
            if " " not in query:
                continue
            ids = holders(token)
            if not any(docs[b].belief.type == "relation" for b in ids):
                for word in query.split(" "):
                    out.setdefault(word, set()).update(ids)
    return out


def drop_within(postings: UserPostings, aliases: Matched, inside: dict[str, set[str]]) -> Matched:
    """`aliases` without the one-word clauses reached by a word of `inside` whose beliefs hold
    none of its phrases (`within_phrases`): "my partner Sanna" still reaches Sanna's belief
    by "sanna" as well as by "partner sanna"."""
    return {
        token: m
        for token, m in aliases.items()
        if " " in m[4]
        or m[4] not in inside
        or not inside[m[4]].isdisjoint(postings.alias_ids(token))
    }


def _numeric(word: str) -> bool:
    """A number ("27001", "9.2"): another number one edit away is another number, no typo."""
    return word.replace(".", "").replace(",", "").isdigit()
