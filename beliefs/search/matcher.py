"""Search: the beliefs a turn names, scored and ranked.

A turn's words are matched against the names of the user's beliefs (`beliefs.search.clauses`:
canonical names, aliases and rejected alternatives, exactly, by stem, by one edit, or by a kind
word of a canonical name), and each belief they reach is a candidate. The relevance
model decides when the index says `relevance_model` (`beliefs.search.relevance`): each
candidate's features are scored by one logistic function, and a candidate is kept when it
reaches one threshold. Otherwise the rules decide (alias-weighted BM25 with corroborated
everyday words, `beliefs.search.accumulate`), and the reference's BM25 alone when
`reference_only`. With a semantic index attached, embedding neighbours above a
floor are fused in by reciprocal rank (`beliefs.index.semantic`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import islice, pairwise
from typing import cast

from beliefs.index.belief_index import BeliefIndex
from beliefs.index.bm25 import within_one_edit
from beliefs.index.indexed_doc import IndexedDoc
from beliefs.index.user_postings import UserPostings
from beliefs.model.record import AnyBelief
from beliefs.search.accumulate import Matches, accumulate, matched_clauses
from beliefs.search.asked_meaning import asked_about, mentioned
from beliefs.search.clauses import (
    MIN_CORPUS,
    MIN_SCORE,
    Matched,
    TermMatches,
    consumed,
    drop_within,
    match_aliases,
    match_canonical,
    match_parts,
    match_rejected_words,
    within_phrases,
)
from beliefs.search.deadline import Deadline
from beliefs.search.hits import Clause, Hit, Relevance
from beliefs.search.in_names import in_names
from beliefs.search.inflected import match_inflected
from beliefs.search.kind_words import KindWord, NameWords, match_kind_words
from beliefs.search.name_roles import kin_words, own_family, owned_words
from beliefs.search.ranking import (
    best_weighted,
    fused,
    neighbours,
    rank_key,
    ranked,
    unweighted,
)
from beliefs.search.relevance import MODEL, kept
from beliefs.search.relevance import Matches as ModelMatches
from beliefs.search.switching import asks_to_switch
from beliefs.text.query import QueryTerms

__all__ = ["MIN_SCORE", "Clause", "Hit", "Relevance", "search", "within_one_edit"]

# the names kept under the old module's private names, for the tests that pin them
_best_weighted = best_weighted
_ranked = ranked


@dataclass(frozen=True)
class _Ask:
    """What one search asks besides the turn: the filter, the weights, the cut and the limit."""

    accept: Callable[[AnyBelief], bool]
    min_score: float
    weight: Callable[[AnyBelief], float] | None
    max_weight: float | None
    limit: int | None
    verdicts: tuple[int, dict[str, bool]] | None
    deadline: Deadline | None
    sense: bool


def search(
    index: BeliefIndex,
    user_id: str,
    terms: QueryTerms,
    accept: Callable[[AnyBelief], bool],
    *,
    min_score: float = MIN_SCORE,
    weight: Callable[[AnyBelief], float] | None = None,
    max_weight: float | None = None,
    limit: int | None = None,
    verdicts: tuple[int, dict[str, bool]] | None = None,
    deadline: Deadline | None = None,
    sense: bool = True,
) -> list[Hit]:
    """Scored hits for `terms` among the user's beliefs that `accept` lets through.

    `verdicts`: (the user's version, belief id -> what `accept` said) the caller remembers; used
    only while the user is at that version, it spares looking at beliefs judged before.

    `weight` multiplies a belief's score before the minimum-score cut (ranking bonuses); each
    belief's weight is kept with it against the `weight` object, so pass the same object while
    the rules hold (`RuleSet.weight`) and a belief is weighed once, not on every search;
    `max_weight`, the most it can give any belief, lets candidates that cannot reach the cut or
    rank within `limit` go unweighed.
    Only the best `limit` accepted hits are returned (all when None). Ties break on most
    recent reinforcement, then id, so results are deterministic.

    `deadline`: once it has passed, postings are no longer read and candidates no longer
    weighed; the hits are the best of what was found by then (`deadline.reached` says so).

    `sense` False: a deliberate search for words (recall), not a turn to read; a name with
    another sense counts without corroboration (`beliefs.search.corroboration`).
    """
    if terms.empty:
        return []
    ask = _Ask(accept, min_score, weight, max_weight, limit, verdicts, deadline, sense)
    with index.lock:
        postings = index.user(user_id)
        if not postings.docs:
            return []
        known: dict[str, bool] = {}
        if verdicts is not None and verdicts[0] == index.user_version(user_id):
            known = verdicts[1]
        if index.reference_only or not index.relevance_model:
            hits = _by_rules(index, postings, terms, ask, known)
        else:
            hits = _by_model(postings, terms, ask, known)
        if index.semantic is None:
            return hits
        near = neighbours(index, user_id, terms, accept, known, postings.docs, bool(hits))
    return fused(hits, near, limit)


def _matched(
    postings: UserPostings, terms: QueryTerms, extended: bool, parts: bool = True
) -> tuple[Matched, Matched, NameWords]:
    """The canonical names, aliases and kind words the turn matches (lock held); `parts`: and,
    when `extended`, aliases named by a code of theirs alone, and in a turn that asks to
    change to something, rejected options named by their first word (the relevance model
    has no feature for those)."""
    n = max(len(postings.docs), MIN_CORPUS)
    canonical = match_canonical(postings, terms, n, extended)
    derived = postings.derived  # views of this user's beliefs, emptied when they change
    cache = cast(TermMatches, derived.setdefault("alias-terms", {}))
    aliases = match_aliases(postings, terms, n, cache, extended)
    names: NameWords = {}
    if extended and parts and postings.parts:
        match_parts(postings, terms, n, aliases)
    if extended and parts and postings.rejected_words and asks_to_switch(terms.cleaned):
        match_rejected_words(postings, terms, n, aliases)
    if extended:
        match_inflected(postings, terms, n, aliases)
        kinds = cast(dict[str, KindWord], derived.setdefault("kind-words", {}))
        used = consumed(canonical, aliases)
        names = match_kind_words(postings, terms, n, canonical, used, kinds)
        if used:
            aliases = drop_within(postings, aliases, within_phrases(postings, canonical, aliases))
        asked = asked_about(terms)
        if asked:  # "what does 'sectio' mean", "who was Dowding": the words, not the names
            canonical = {k: m for k, m in canonical.items() if not mentioned(m[4], asked)}
            aliases = {k: m for k, m in aliases.items() if not mentioned(m[4], asked)}
            names = {
                k: words
                for k, words in names.items()
                if not all(mentioned(q, asked) for _, _, q in words)
            }
    return canonical, aliases, names


def _taker(docs: dict[str, IndexedDoc], ask: _Ask, known: dict[str, bool]) -> Callable[[str], bool]:
    def taken(bid: str) -> bool:
        verdict = known.get(bid)  # rejected before: not looked at again (most are)
        return ask.accept(docs[bid].belief) if verdict is None else verdict

    return taken


def _in_family(
    taken: Callable[[str], bool], terms: QueryTerms, docs: dict[str, IndexedDoc]
) -> Callable[[str], bool]:
    """`taken`, and when the turn is about the user's relations (`own_family`: "my sister's
    wedding" is no work belief's) only beliefs that say something of them or that the turn
    names as the user's own (`owned_words`: "can my son use my Steam Deck?")."""
    family = own_family(terms)
    if not family:
        return taken
    owned = owned_words(terms)

    def in_family(bid: str) -> bool:
        doc = docs[bid]
        if not taken(bid):
            return False
        if owned and any(a.split(" ")[0] in owned for a in doc.aliases):
            return True
        return not family.isdisjoint(kin_words(doc))

    return in_family


def _factor(docs: dict[str, IndexedDoc], ask: _Ask) -> Callable[[str], float]:
    weight = ask.weight
    if weight is None:
        return unweighted

    def factor(bid: str) -> float:
        doc = docs[bid]
        if doc.weighed_by is not weight:
            doc.weight = weight(doc.belief)
            doc.weighed_by = weight
        return doc.weight

    return factor


def model_candidates(
    postings: UserPostings, terms: QueryTerms, sense: bool = True, deadline: Deadline | None = None
) -> tuple[dict[str, float], ModelMatches]:
    """The relevance model's candidates with their BM25 prescores, and what the turn matched:
    every clause counts, and the sense check's verdict rides along for the features (none
    when `sense` is off: a deliberate search). Lock held."""
    canonical, aliases, names = _matched(postings, terms, True, parts=False)
    named = in_names(terms) if sense else frozenset()
    prescores, corroborated = accumulate(
        postings, terms, canonical, aliases, names, deadline=deadline, sense=sense, named=named,
        every_clause=True,
    )  # fmt: skip
    sensed = corroborated if sense else None
    return prescores, ModelMatches.of(postings, terms, canonical, aliases, names, sensed, named)


def _by_model(
    postings: UserPostings, terms: QueryTerms, ask: _Ask, known: dict[str, bool]
) -> list[Hit]:
    """Candidates by name, kept and ranked by the relevance model (lock held)."""
    prescores, m = model_candidates(postings, terms, ask.sense, ask.deadline)
    docs = postings.docs
    factor = _factor(docs, ask)
    taken = _taker(docs, ask, known)
    if ask.sense:
        taken = _in_family(taken, terms, docs)
    chosen = []
    for bid, verdict in kept(m, prescores, taken, ask.limit, ask.deadline):
        score = MODEL.score(verdict.logit) * factor(bid)
        if score >= ask.min_score:
            chosen.append((-round(score, 9), bid, docs[bid], score, verdict))
    chosen.sort(key=lambda e: (e[0], e[2].recency, e[1]))
    if ask.limit is not None:
        chosen = chosen[: ask.limit]
    # every clause the model weighed, each with what corroborated it, if anything
    why = m.turn.corroborated or {}
    rules = Matches(
        postings.avg_alias_len, m.canonical, m.aliases, m.names, why, False, m.turn.named,
        terms.languages,
    )  # fmt: skip
    return [
        Hit(doc.belief, score, explain=partial(matched_clauses, doc, rules), relevance=verdict)
        for _, _, doc, score, verdict in chosen
    ]


def _by_rules(
    index: BeliefIndex, postings: UserPostings, terms: QueryTerms, ask: _Ask, known: dict[str, bool]
) -> list[Hit]:
    """Candidates scored by the rules (the default), or by the reference's BM25 alone
    (lock held)."""
    extended = not index.reference_only
    canonical, aliases, names = _matched(postings, terms, extended)
    if ask.weight is None:
        floor = ask.min_score
    else:
        floor = 0.0 if ask.max_weight is None else ask.min_score / max(ask.max_weight, 1e-9)
    gated = extended and ask.sense
    named = in_names(terms) if gated else frozenset()
    scores, corroborated = accumulate(
        postings, terms, canonical, aliases, names, extended, floor, ask.deadline, ask.sense, named
    )
    docs = postings.docs
    taken = _taker(docs, ask, known)
    if gated:
        taken = _in_family(taken, terms, docs)
    factor = _factor(docs, ask)
    limit, min_score = ask.limit, ask.min_score
    most = 1.0 if ask.weight is None else ask.max_weight  # the largest factor, if known
    if limit is not None and most is not None:
        best = best_weighted(scores, factor, most, min_score, limit, taken, ask.deadline)
    else:
        if ask.weight is not None:
            for bid, score in scores.items():
                scores[bid] = score * factor(bid)
        best = list(
            islice(((s, b) for s, b in ranked(scores, min_score, limit) if taken(b)), limit)
        )
    matches = Matches(
        postings.avg_alias_len, canonical, aliases, names, corroborated, gated, named,
        terms.languages,
    )  # fmt: skip
    # (-rounded score, id): best first, ties to the most recently reinforced
    chosen = [(-round(score, 9), bid, docs[bid], score) for score, bid in best]
    if any(a[0] == b[0] for a, b in pairwise(chosen)):  # ties need the recency tie-break
        chosen.sort(key=rank_key)
    return [
        Hit(doc.belief, score, explain=partial(matched_clauses, doc, matches))
        for _, _, doc, score in chosen
    ]
