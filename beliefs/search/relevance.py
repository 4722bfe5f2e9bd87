"""The relevance model: one scoring function and one threshold over every candidate.

Candidates are the beliefs whose names a turn's words match (`beliefs.search.clauses`); each
becomes a feature vector (`beliefs.search.features`), scored by a logistic model whose weights
`bench/fit_relevance.py` fits on the training corpora and freezes in
`beliefs.search.relevance_weights`. A candidate is kept when its logit reaches the threshold.
Its score is MIN_SCORE × e^(logit − threshold): at the threshold exactly the minimum score, so
ranking bonuses (`weight`) multiply it and the minimum-score cut applies as before.

Only the best FEATURED candidates by BM25 (at least 4 × the hits asked for) are weighed: a
turn whose common word reaches thousands of beliefs weighs a bounded few.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass
from operator import mul
from typing import cast

from beliefs.index.user_postings import UserPostings
from beliefs.search.accumulate import Corroborated
from beliefs.search.clauses import MIN_SCORE, Matched
from beliefs.search.deadline import Deadline, passed
from beliefs.search.features import FEATURES, UNIVERSAL, Turn, company, matched, outright, vector
from beliefs.search.hits import Relevance
from beliefs.search.kind_words import NameWords
from beliefs.search.relevance_weights import THRESHOLD, WEIGHTS
from beliefs.text.query import QueryTerms

FEATURED = 64  # candidates weighed at least, best BM25 first
DEADLINE_STRIDE = 16
_MAX_EXPONENT = 30.0


@dataclass(frozen=True)
class Model:
    """Weights in FEATURES order and the logit a candidate must reach."""

    weights: tuple[float, ...]
    threshold: float

    @classmethod
    def frozen(cls) -> Model:
        return cls(tuple(WEIGHTS.get(name, 0.0) for name in FEATURES), THRESHOLD)

    def logit(self, values: list[float]) -> float:
        return float(sum(map(mul, self.weights, values)))  # both in FEATURES order

    def score(self, logit: float) -> float:
        """The search score of a logit: MIN_SCORE at the threshold."""
        exponent = max(-_MAX_EXPONENT, min(_MAX_EXPONENT, logit - self.threshold))
        return MIN_SCORE * math.exp(exponent)


MODEL = Model.frozen()


@dataclass(frozen=True)
class Matches:
    """The names one turn matched, with what scoring them needs."""

    postings: UserPostings
    turn: Turn
    canonical: Matched
    aliases: Matched
    names: NameWords

    @classmethod
    def of(cls, postings: UserPostings, terms: QueryTerms, canonical: Matched,
           aliases: Matched, names: NameWords, corroborated: Corroborated | None,
           named: frozenset[str]) -> Matches:  # fmt: skip
        """`corroborated` and `named`: what the sense check found (`accumulate`), for the
        sense features; None when it did not run."""
        turn = Turn.of(terms, corroborated, named)
        return cls(postings, turn, canonical, aliases, names)


def weigh(m: Matches, bid: str, scopes: dict[str, int], model: Model = MODEL) -> Relevance:
    """The model's verdict on one candidate (`scopes`: candidates named outright by scope)."""
    postings = m.postings
    doc = postings.docs[bid]
    # the belief's own words, kept until the user's beliefs change
    domains = cast(dict[str, frozenset[str]], postings.derived.setdefault("relevance-domain", {}))
    hits = matched(doc, m.canonical, m.aliases, m.names, postings.avg_alias_len)
    near = company(doc, scopes, outright(hits, m.turn))
    values = vector(doc, hits, m.turn, postings, domains, near)
    return Relevance(
        tuple(zip(FEATURES, values, strict=True)), model.logit(values), model.threshold
    )


def kept(
    m: Matches,
    prescores: dict[str, float],
    taken: Callable[[str], bool],
    limit: int | None,
    deadline: Deadline | None = None,
    model: Model = MODEL,
) -> list[tuple[str, Relevance]]:
    """The candidates the model keeps, among the best FEATURED (or 4 × `limit`) by BM25 that
    `taken` lets through; every candidate when `limit` is None."""
    want = None if limit is None else max(FEATURED, 4 * limit)
    if want is None or len(prescores) <= want:
        order = sorted(prescores, key=lambda b: (-prescores[b], b))
    else:
        order = heapq.nsmallest(4 * want, prescores, key=lambda b: (-prescores[b], b))
    scopes = _named_scopes(m, order[: 4 * want] if want is not None else order)
    out: list[tuple[str, Relevance]] = []
    weighed = 0
    for bid in order:
        if want is not None and weighed >= want:
            break
        if weighed % DEADLINE_STRIDE == DEADLINE_STRIDE - 1 and passed(deadline):
            break
        if not taken(bid):
            continue
        weighed += 1
        verdict = weigh(m, bid, scopes, model)
        if verdict.logit >= verdict.threshold:
            out.append((bid, verdict))
    return out


def _named_scopes(m: Matches, order: list[str]) -> dict[str, int]:
    """How many candidates the turn names outright, by scope (universal aside)."""
    docs, canonical, aliases = m.postings.docs, m.canonical, m.aliases
    out: dict[str, int] = {}
    for bid in order:
        doc = docs[bid]
        # named outright: by its canonical name or a name of its own, not by a kind word
        if doc.canonical in canonical or not aliases.keys().isdisjoint(doc.aliases):
            for scope in doc.belief.scope:
                if scope != UNIVERSAL:
                    out[scope] = out.get(scope, 0) + 1
    return out
