"""What the relevance model reads about one candidate belief for one turn.

Every piece of evidence the rules used is one number here, measured on every candidate alike:
how its names matched (exact, stem, edit, name word; canonical, alias or rejected field; a
phrase or one word), how everyday the matched word is (`beliefs.text.lexicon`), how the turn
writes it (a capital where no sentence starts, code, lower case), whether the belief writes it
as a name, which other words of the belief's own text (content, why it matters, names, scope)
the turn holds, whether the turn is in another script, and the belief's trust tier.

The sense check is one family: for a match on an everyday word, the written form, the other
script, the belief's proper name and the corroborating words are crossed with it, so the model
weighs them where the word alone is weak evidence ("my java went cold" vs Java 21); and the
sense check's own verdict (`beliefs.search.corroboration`: a capital, a word of kinship or of a
several-word name, the belief's words near it, a sibling of its scope) is three features: it
corroborated a name with another sense, it corroborated none, and among those one stands
inside another name, after a word of kinship or as an acronym (evidence against).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from beliefs.index.bm25 import K1, B
from beliefs.index.indexed_doc import IndexedDoc
from beliefs.index.user_postings import UserPostings
from beliefs.search.accumulate import kind_gated, kind_key
from beliefs.search.clauses import Matched
from beliefs.search.corroboration import needs_sense
from beliefs.search.hits import Match
from beliefs.search.kind_words import NameWords
from beliefs.search.own_text import proper_words
from beliefs.text.lexicon import is_common, is_function_word, is_general, stem, zipf
from beliefs.text.query import STOP_WORDS, QueryTerms

FEATURES = (
    "bias",
    "bm25",  # log(1 + the clauses' BM25 sum)
    "phrase",  # a multi-word name matched
    "canonical",  # the whole canonical name matched
    "rare",  # a one-word name that is no everyday word, matched as written
    "rare_inexact",  # such a name, by stem or one edit
    "everyday_only",  # every matched word is an everyday English word
    "general",  # ... and one too frequent to name anything (`go`, `make`)
    "rarity",  # how rare the rarest matched word is (8 - Zipf) / 8
    "name_word_only",  # only a kind word of a canonical name
    "rejected_only",  # only a rejected alternative
    "inexact_only",  # only by stem or edit
    "numeric",  # a number matched a numeric name
    "marked",  # the turn writes the matched word as a name (capital mid-sentence, code span)
    "coded",  # the matched word was read out of code (identifier, path, code block)
    "proper",  # the belief writes the matched word as a name
    "clauses",  # how many distinct names matched, past the first (at most 2)
    "corroborating_rare",  # log(1 + the belief's own rare words in the turn)
    "corroborating_common",  # log(1 + its everyday (not general) words in the turn)
    "corroborating_near",  # one of them within three words of the matched word
    "other_script",  # the turn holds Hangul, kana or Han and the matched word is Latin
    "everyday_marked",
    "everyday_coded",
    "everyday_proper",
    "everyday_corroborated",
    "everyday_other_script",
    "everyday_topic",  # ... a word the belief writes in lower case only: its topic, not a name
    "company",  # log(1 + other candidates named in the turn that share its scope)
    "alone",  # one name matched and nothing else of the belief's own text in the turn
    "shared",  # log(1 + beliefs its best name reaches)
    "trust",  # trust tier over 3
    "turn_length",  # log(1 + the turn's words) / 5
    "sense_passed",  # a name with another sense, corroborated by the sense check
    "sense_failed",  # every name has another sense and the sense check found no corroboration
    "sense_contrary",  # ... and one is written in another name, after kinship, or as an acronym
    "kind_passed",  # a kind word of its canonical name that the sense check let count
)
NEAR = 3
UNIVERSAL = "user:universal"
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Turn:
    """What the features read of the turn, worked out once per search."""

    terms: QueryTerms
    stems: dict[str, str]  # stem of each telling word -> the word
    positions: dict[str, list[int]]  # word -> where it stands in the sequence
    # (belief id, token) of the names the sense check corroborated (`accumulate`; None when
    # it did not run: a deliberate search), and the turn's words written inside a name or
    # after a word of kinship (`in_names`)
    corroborated: dict[tuple[str, str], str] | None
    named: frozenset[str]

    @classmethod
    def of(cls, terms: QueryTerms, corroborated: dict[tuple[str, str], str] | None,
           named: frozenset[str]) -> Turn:  # fmt: skip
        stems = {stem(w): w for w in terms.words if telling(w)}
        positions: dict[str, list[int]] = {}
        for i, w in enumerate(terms.sequence):
            positions.setdefault(w, []).append(i)
        return cls(terms, stems, positions, corroborated, named)


def telling(word: str) -> bool:
    """A word specific enough to tie a turn to a belief (no stop, function word or number)."""
    return len(word) > 1 and word not in STOP_WORDS and not word.isdigit() and not _function(word)


def _function(word: str) -> bool:
    return is_function_word(word)


def domain(doc: IndexedDoc, cache: dict[str, frozenset[str]]) -> frozenset[str]:
    """Stems of the telling words of the belief's content, why it matters, names and scope."""
    bid = doc.belief.id
    found = cache.get(bid)
    if found is None:
        belief = doc.belief
        scope = " ".join(s.partition(":")[2] for s in belief.scope)
        text = " ".join(
            [
                belief.content,
                belief.why_it_matters or "",
                doc.canonical,
                *doc.aliases[: doc.alias_count],
                scope,
            ]
        )
        words = _WORD.findall(text.lower().replace("-", " "))
        found = cache[bid] = frozenset(stem(w) for w in words if telling(w))
    return found


# (token, query word, how, field, BM25 score) of one matched name
Hit = tuple[str, str, Match, str, float]


def matched(doc: IndexedDoc, canonical: Matched, aliases: Matched, names: NameWords,
            avg_alias_len: float) -> list[Hit]:  # fmt: skip
    """The names of `doc` the turn matched."""
    out: list[Hit] = []
    if doc.canonical in canonical:
        base, _, _, how, query = canonical[doc.canonical]
        out.append((doc.canonical, query, how, "canonical_name", base))
    for base, _, query in names.get(doc.canonical, ()):
        out.append((doc.canonical, query, "name_word", "canonical_name", base))
    norm = 1.0 / (1.0 + K1 * (1.0 - B + B * len(doc.aliases) / avg_alias_len))
    for i, token in enumerate(doc.aliases):
        if token in aliases:
            base, _, _, how, query = aliases[token]
            field = "alias" if i < doc.alias_count else "rejected_alternative"
            out.append((token, query, how, field, base * norm))
    return out


def outright(hits: list[Hit], turn: Turn) -> bool:
    """Whether the turn names the candidate by one of its own names (not by a kind word)."""
    return any(how != "name_word" for _, _, how, _, _ in hits)


def company(doc: IndexedDoc, scopes: dict[str, int], named: bool) -> int:
    """How many other candidates named by the turn share a scope with `doc` (its topic's scope:
    the turn is about that part of the user's life)."""
    own = {s for s in doc.belief.scope if s != UNIVERSAL}
    return max((scopes.get(s, 0) - named for s in own), default=0)


def vector(doc: IndexedDoc, hits: list[Hit], turn: Turn, postings: UserPostings,
           domains: dict[str, frozenset[str]], company: int = 0) -> list[float]:  # fmt: skip
    """The feature values of one candidate, in FEATURES order."""
    terms = turn.terms
    one_word = [h for h in hits if " " not in h[0] and h[2] != "name_word"]
    phrase = any(
        " " in h[0] and h[2] != "name_word" and h[3] != "rejected_alternative" for h in hits
    )
    rare = [h for h in one_word if not _everyday(h[0]) and not h[0].isdigit()]
    numeric = any(h[0].replace(".", "").isdigit() for h in one_word)
    everyday_only = not phrase and not rare and not numeric and bool(one_word)
    queries = {h[1] for h in hits}
    marked = any(q in terms.marked for q in queries)
    coded = any(q in terms.coded for q in queries)
    proper = any(h[0] in proper_words(doc) for h in one_word)
    own = {stem(w) for h in hits for w in (*h[0].split(), *h[1].split())}
    shared = domain(doc, domains).intersection(turn.stems).difference(own)
    corr_rare = sum(1 for s in shared if not _everyday(turn.stems[s]))
    corr_common = sum(
        1 for s in shared if _everyday(turn.stems[s]) and not is_general(turn.stems[s])
    )
    near = _near(turn, queries, {turn.stems[s] for s in shared})
    other = terms.other_script and any(q.isascii() for q in queries)
    corroborated = corr_rare + corr_common > 0
    rarity = min((zipf(w) for h in one_word for w in [h[0]]), default=0.0)
    reach = min((_reach(postings, h) for h in hits), default=1)
    # the sense check's verdict on its one-word names that have another sense
    sensed, bid = turn.corroborated, doc.belief.id
    gated = (
        []
        if sensed is None
        else [h for h in one_word if needs_sense(h[0], h[2], h[1], turn.named, terms.languages)]
    )
    passed = sensed is not None and any((bid, h[0]) in sensed for h in gated)
    failed = bool(gated) and not passed and len(gated) == len(hits)
    contrary = failed and any(h[1] in turn.named for h in gated)
    kinds = [h[1] for h in hits if h[2] == "name_word"]
    kind_passed = bool(kinds) and (
        not kind_gated(kinds) or (sensed is not None and (bid, kind_key(doc.canonical)) in sensed)
    )
    return [
        1.0,
        math.log1p(sum(h[4] for h in hits)),
        float(phrase),
        float(any(h[3] == "canonical_name" and h[2] != "name_word" for h in hits)),
        float(any(h[2] == "exact" for h in rare)),
        float(bool(rare) and all(h[2] != "exact" for h in rare)),
        float(everyday_only),
        float(everyday_only and any(is_general(h[0]) for h in one_word)),
        (8.0 - min(rarity, 8.0)) / 8.0,
        float(all(h[2] == "name_word" for h in hits)),
        float(all(h[3] == "rejected_alternative" for h in hits)),
        float(all(h[2] in ("stemmed", "fuzzy") for h in hits)),
        float(numeric),
        float(marked),
        float(coded),
        float(proper),
        float(min(len({h[0] for h in hits}) - 1, 2)),
        math.log1p(corr_rare),
        math.log1p(corr_common),
        float(near),
        float(other),
        float(everyday_only and marked),
        float(everyday_only and coded),
        float(everyday_only and proper),
        float(everyday_only and corroborated),
        float(everyday_only and other),
        float(everyday_only and not proper and not any(is_general(h[0]) for h in one_word)),
        math.log1p(company),
        float(not corroborated and len({h[0] for h in hits}) == 1),
        math.log1p(reach),
        min(doc.belief.trust, 3) / 3.0,
        math.log1p(len(terms.sequence)) / 5.0,
        float(passed),
        float(failed),
        float(contrary),
        float(kind_passed),
    ]


def _everyday(word: str) -> bool:
    return is_common(word) or is_general(word)


def _reach(postings: UserPostings, hit: Hit) -> int:
    token, _, _how, field, _ = hit
    if field == "canonical_name":
        return len(postings.canonical_ids(token))
    return postings.alias_df(token)


def _near(turn: Turn, queries: set[str], words: set[str]) -> bool:
    """Whether one of `words` stands within NEAR words of a matched query word."""
    if not words:
        return False
    places = [i for q in queries for i in turn.positions.get(q, ())]
    return any(abs(i - j) <= NEAR for w in words for j in turn.positions.get(w, ()) for i in places)
