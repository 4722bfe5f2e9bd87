"""Alias-weighted BM25 over canonical names, aliases and rejected alternatives.

Lucene-style scoring (k1 = 1.2, b = 0.75, idf over the user's corpus) times a clause boost:
canonical name word 14, canonical n-gram 14, alias word 5, alias n-gram 14. Alias clauses allow
one edit (Damerau) when the first two characters match; canonical names match exactly.

Beyond the reference: a clause also matches by its Snowball stem at STEM_FACTOR of its boost
("dashboards" finds `dashboard`), one word of a multi-word canonical name matches at
BOOST_NAME_WORD ("which database" finds `database_postgres`), and a single-word name that is an
everyday English word counts only when corroborated (`beliefs.search.corroboration`). The minimum
score applies to all of it. With a semantic index attached, embedding neighbours above a
floor are fused in by reciprocal rank (`beliefs.index.semantic`).
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from functools import partial
from itertools import islice, pairwise
from typing import Literal, cast

from beliefs.index.belief_index import BeliefIndex
from beliefs.index.bm25 import (
    K1,
    TF_NORM_ONE,
    B,
    idf,
    label,
    length_norms,
    similarity,
    within_one_edit,
)
from beliefs.index.indexed_doc import FUZZY_PREFIX, IndexedDoc
from beliefs.index.semantic import Neighbour, fuse
from beliefs.index.user_postings import UserPostings
from beliefs.model.record import AnyBelief
from beliefs.search.corroboration import WRITTEN, Witness, proper_words
from beliefs.search.deadline import Deadline, passed
from beliefs.search.kind_words import NameWords, match_kind_words
from beliefs.text.lexicon import is_common, is_general, stem
from beliefs.text.query import MAX_NGRAM, QueryTerms

MIN_SCORE = 3.0
# BM25 needs a corpus: below this many beliefs the document count is floored, so a new
# user's first beliefs are found by one alias instead of all sinking under MIN_SCORE.
MIN_CORPUS = 32
BOOST_CANONICAL_WORD = 14.0
BOOST_CANONICAL_PHRASE = 14.0
BOOST_ALIAS_WORD = 5.0
BOOST_ALIAS_PHRASE = 14.0
STEM_FACTOR = 0.8  # a stemmed match scores this share of the exact one
DEADLINE_STRIDE = 64  # candidates weighed between looks at the clock

Match = Literal["exact", "fuzzy", "stemmed", "name_word", "semantic", "participant"]


@dataclass(frozen=True)
class Clause:
    """One reason a belief matched: the field, the term (query~indexed unless equal), its score,
    how it matched, and for an everyday word what corroborated it."""

    field: str
    term: str
    score: float
    match: Match = "exact"
    corroborated: str | None = None

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "field": self.field,
            "term": self.term,
            "score": round(self.score, 4),
            "match": self.match,
        }
        if self.corroborated is not None:
            out["corroborated"] = self.corroborated
        return out


class Hit:
    """A belief that matched, its score and why (the clauses are worked out when first read:
    the proxy never reads them, the recall API and the evaluation do)."""

    __slots__ = ("_clauses", "_explain", "belief", "score")

    def __init__(
        self,
        belief: AnyBelief,
        score: float,
        clauses: list[Clause] | None = None,
        *,
        explain: Callable[[], list[Clause]] | None = None,
    ) -> None:
        self.belief = belief
        self.score = score
        self._clauses = clauses
        self._explain = explain

    @property
    def clauses(self) -> list[Clause]:
        if self._clauses is None:
            self._clauses = self._explain() if self._explain is not None else []
            self._explain = None
        return self._clauses

    def __repr__(self) -> str:
        return f"Hit({self.belief.id!r}, {self.score:.4f})"


Matched = dict[str, tuple[float, str, str, Match, str]]


def _match_canonical(
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
MAX_CACHED_TERMS = 50_000


def _alias_matches(
    postings: UserPostings, query: str, cache: TermMatches
) -> tuple[tuple[str, int], ...]:
    """Alias tokens equal to `query` or one edit away with the same two-character prefix.

    Turns repeat their words ("the", "deploy", "redis"), so results are kept per query term
    until the user's beliefs change (the cache lives in the user's derived views).
    """
    found = cache.get(query)
    if found is None:
        fuzzy = len(query) > FUZZY_PREFIX
        out = []
        for token in postings.alias_candidates(query, fuzzy=fuzzy):
            edits = within_one_edit(query, token)
            if edits is not None and query[:FUZZY_PREFIX] == token[:FUZZY_PREFIX]:
                out.append((token, edits))
        found = tuple(out)
        if len(cache) >= MAX_CACHED_TERMS:
            cache.clear()
        cache[query] = found
    return found


def _match_aliases(
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
                if edits and extended and _another_word(query, token):
                    continue
                df = postings.alias_df(token)
                base = boost * idf(n, df) * similarity(query, token, edits)
                if token not in matched or base > matched[token][0]:
                    how: Match = "exact" if edits == 0 else "fuzzy"
                    matched[token] = (base, "alias", label(query, token), how, query)
    if not extended:
        return matched
    for queries, boost in ((words, BOOST_ALIAS_WORD), (phrases, BOOST_ALIAS_PHRASE)):
        for query in queries:
            for token in postings.stem_matches("alias", query):
                if token not in matched and _prefix_ok(query, token):
                    base = boost * STEM_FACTOR * idf(n, postings.alias_df(token))
                    matched[token] = (base, "alias", label(query, token), "stemmed", query)
    return matched


def _another_word(query: str, token: str) -> bool:
    """Whether the turn's word, an edit from an alias, is an everyday word of another stem: the
    word meant, not a typo ("cells" for "cello", "Falcon" for "Falco")."""
    return is_common(query) and stem(query) != stem(token)


def _may_need_corroboration(token: str, how: Match, query: str) -> bool:
    """A one-word name that is an everyday word (or reached from one by stem or edit)."""
    if " " in token:
        return False
    return is_common(token) or (how != "exact" and is_common(query))


def _consumed(canonical: Matched, aliases: Matched) -> set[str]:
    """Query words that are part of a phrase some name matched ("pipeline" of "CI pipeline")."""
    return {w for m in (canonical, aliases) for *_, q in m.values() if " " in q for w in q.split()}


Corroborated = dict[tuple[str, str], str]  # (belief id, token) -> why the common word counts


# One clause's postings to walk: (token, (rate, ids) groups, for a gated one its query word)
Walk = tuple[str, list[tuple[float, Collection[str]]], str | None]


def _accumulate(
    postings: UserPostings,
    terms: QueryTerms,
    canonical: Matched,
    aliases: Matched,
    names: NameWords,
    extended: bool = True,
    ambiguity: dict[str, frozenset[str]] | None = None,
    floor: float = 0.0,
    deadline: Deadline | None = None,
) -> tuple[dict[str, float], Corroborated]:
    """Each matched belief's score, summed clause by clause in a fixed order; clauses of an
    everyday name (gated) count last, and only where corroborated.

    `floor`: the score below which a belief cannot be returned (the minimum score over the
    largest weight). The weakest clauses, whose best rates together stay below it, cannot lift
    a belief to it alone, so their postings are read only for beliefs a stronger clause found
    (MaxScore's non-essential lists): a common alias costs what its few useful beliefs cost.

    Past `deadline`, no further clause's postings are read (the first always is): the scores
    are those of the clauses read by then.
    """
    norms = length_norms(postings.avg_alias_len)
    docs = postings.docs
    walks: list[Walk] = []
    for token, (base, _, _, how, query) in canonical.items():
        gate = query if extended and _may_need_corroboration(token, how, query) else None
        walks.append((token, [(base, postings.canonical_ids(token))], gate))
    for token, words in names.items():
        walks.append((token, [(sum(b for b, _, _ in words), postings.canonical_ids(token))], None))
    for token, (base, _, _, how, query) in aliases.items():
        gate = query if extended and _may_need_corroboration(token, how, query) else None
        groups = [(base * norms[n], ids) for n, ids in postings.alias_groups(token)]
        walks.append((token, groups, gate))
    among = _essential(walks, floor)
    scores: dict[str, float] = {}
    get = scores.get
    for _, groups, gate in walks:
        if gate is not None:
            continue
        if scores and passed(deadline):
            return scores, {}
        for rate, ids in groups:
            if among is not None:
                ids = among.intersection(ids)
            if not scores:
                scores = dict.fromkeys(ids, rate)
                get = scores.get
                continue
            for bid in ids:
                scores[bid] = get(bid, 0.0) + rate
    corroborated: Corroborated = {}
    ambiguity = {} if ambiguity is None else ambiguity
    matched_before = set(scores)
    for token, groups, word in walks:
        if word is None:
            continue
        if passed(deadline):
            break
        ambiguous = ambiguity.get(token)
        if ambiguous is None:
            ambiguous = _ambiguous(
                postings, token, [b for _, ids in groups for b in ids], ambiguity
            )
        witness = Witness(terms, word, token) if ambiguous else None
        if witness is not None and witness.written:  # written as a name: counts everywhere
            corroborated.update(((bid, token), WRITTEN) for bid in ambiguous)
            ambiguous = frozenset()
        for rate, ids in groups:
            for bid in ids if among is None else among.intersection(ids):
                if witness is not None and bid in ambiguous:
                    reason = witness.reason(docs[bid], bid in matched_before)
                    if reason is None:
                        continue
                    corroborated[bid, token] = reason
                scores[bid] = get(bid, 0.0) + rate
    return scores, corroborated


def _essential(walks: list[Walk], floor: float) -> set[str] | None:
    """The beliefs that may reach `floor`: those on an essential posting (None: every posting
    is essential, or too few are not to be worth sparing).

    The non-essential postings are the weakest whose best rates sum below `floor`; a belief on
    none but them scores below it.
    """
    if floor <= 0.0 or len(walks) < 2:
        return None
    by_rate = sorted(
        ((max((rate for rate, _ in groups), default=0.0), groups) for _, groups, _ in walks),
        key=lambda best: best[0],
    )
    spare = floor * (1.0 - 1e-9)  # sums in another order may differ in the last digit
    weak = 0
    for best, _ in by_rate:
        spare -= best
        if spare <= 0.0:
            break
        weak += 1
    if not weak:
        return None
    skipped = sum(len(ids) for _, groups in by_rate[:weak] for _, ids in groups)
    among: set[str] = set()
    for _, groups in by_rate[weak:]:
        for _, ids in groups:
            among.update(ids)
    return among if len(among) < skipped else None


def _ambiguous(
    postings: UserPostings,
    token: str,
    posting: Collection[str],
    cache: dict[str, frozenset[str]],
) -> frozenset[str]:
    """The beliefs for which `token` is an ambiguous name (kept until the user's beliefs change)."""
    found = cache.get(token)
    if found is None:
        docs = postings.docs
        if is_general(token):
            found = frozenset(posting)
        else:
            found = frozenset(bid for bid in posting if token in proper_words(docs[bid]))
        cache[token] = found
    return found


def _counts(doc: IndexedDoc, token: str, how: Match, query: str, m: _Matches) -> bool:
    """Whether a matched token scored for `doc` (an everyday name needs corroboration)."""
    if not m.extended or (doc.belief.id, token) in m.corroborated:
        return True
    if not _may_need_corroboration(token, how, query):
        return True
    return not is_general(token) and token not in proper_words(doc)


@dataclass(frozen=True)
class _Matches:
    """Everything one turn matched, kept so a hit's clauses can be rebuilt when read."""

    avg_alias_len: float
    canonical: Matched
    aliases: Matched
    names: NameWords
    corroborated: Corroborated
    extended: bool = True


def _clauses(doc: IndexedDoc, m: _Matches) -> list[Clause]:
    """Rebuild why one document matched (only for hits whose clauses are read)."""
    out: list[Clause] = []
    bid = doc.belief.id
    if doc.canonical in m.canonical:
        base, fld, label, how, query = m.canonical[doc.canonical]
        if _counts(doc, doc.canonical, how, query, m):
            why = m.corroborated.get((bid, doc.canonical))
            out.append(Clause(fld, label, base, how, why))
    for base, label, _ in m.names.get(doc.canonical, ()):
        out.append(Clause("canonical_name", label, base, "name_word"))
    dl = len(doc.aliases)
    norm = 1.0 / (1.0 + K1 * (1.0 - B + B * dl / m.avg_alias_len))
    for i, token in enumerate(doc.aliases):
        fld = "alias" if i < doc.alias_count else "rejected_alternative"
        if token in m.aliases:
            base, _, label, how, query = m.aliases[token]
            if _counts(doc, token, how, query, m):
                why = m.corroborated.get((bid, token))
                out.append(Clause(fld, label, base * norm, how, why))
    out.sort(key=lambda c: -c.score)
    return out


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
) -> list[Hit]:
    """Scored hits for `terms` among the user's beliefs that `accept` lets through.

    `verdicts`: (the user's version, belief id -> what `accept` said) the caller remembers; used
    only while the user is at that version, it spares looking at beliefs judged before.

    `weight` multiplies a belief's score before the minimum-score cut (ranking bonuses); each
    belief's weight is kept with it against the `weight` object, so pass the same object while
    the rules hold (`RuleSet.weight`) and a belief is weighed once, not on every search;
    `max_weight`, the most it can give any belief, lets postings that cannot reach the cut be
    skipped and, with a `limit`, only the candidates that can still rank be weighed (without
    it, and with a weight, every posting is walked and every candidate weighed).
    Only the best `limit` accepted hits are returned (all when None). Ties break on most
    recent reinforcement, then id, so results are deterministic.

    `deadline`: once it has passed, postings are no longer read and candidates no longer
    weighed; the hits are the best of what was found by then (`deadline.reached` says so).
    """
    if terms.empty:
        return []
    with index.lock:
        postings = index.user(user_id)
        if not postings.docs:
            return []
        n = max(len(postings.docs), MIN_CORPUS)
        extended = not index.reference_only
        canonical = _match_canonical(postings, terms, n, extended)
        derived = postings.derived  # views of this user's beliefs, emptied when they change
        cache = cast(TermMatches, derived.setdefault("alias-terms", {}))
        aliases = _match_aliases(postings, terms, n, cache, extended)
        names: NameWords = {}
        if extended:
            consumed = _consumed(canonical, aliases)
            kinds = cast(
                dict[str, tuple[float, dict[str, str]]],
                derived.setdefault("kind-words", {}),
            )
            names = match_kind_words(postings, terms, n, canonical, consumed, kinds)
        ambiguity = cast(dict[str, frozenset[str]], derived.setdefault("ambiguous", {}))
        if weight is None:
            floor = min_score
        else:
            floor = 0.0 if max_weight is None else min_score / max(max_weight, 1e-9)
        scores, corroborated = _accumulate(
            postings, terms, canonical, aliases, names, extended, ambiguity, floor, deadline
        )
        docs = postings.docs
        known: dict[str, bool] = {}
        neighbours: list[Neighbour] = []
        if verdicts is not None and verdicts[0] == index.user_version(user_id):
            known = verdicts[1]

        def taken(bid: str) -> bool:
            verdict = known.get(bid)  # rejected before: not looked at again (most are)
            return accept(docs[bid].belief) if verdict is None else verdict

        factor: Callable[[str], float] = _unweighted
        if weight is not None:

            def factor(bid: str) -> float:
                doc = docs[bid]
                if doc.weighed_by is not weight:
                    doc.weight = weight(doc.belief)
                    doc.weighed_by = weight
                return doc.weight

        most = 1.0 if weight is None else max_weight  # the largest factor, if known
        if limit is not None and most is not None:
            ranked = _best_weighted(scores, factor, most, min_score, limit, taken, deadline)
        else:
            if weight is not None:
                for bid, score in scores.items():
                    scores[bid] = score * factor(bid)
            ranked = list(
                islice(((s, b) for s, b in _ranked(scores, min_score, limit) if taken(b)), limit)
            )
        matches = _Matches(
            postings.avg_alias_len, canonical, aliases, names, corroborated, extended
        )
        # (-rounded score, id): best first, ties to the most recently reinforced
        chosen = [(-round(score, 9), bid, docs[bid], score) for score, bid in ranked]
        if index.semantic is not None:
            neighbours = _neighbours(index, user_id, terms, accept, known, docs, bool(chosen))
    if any(a[0] == b[0] for a, b in pairwise(chosen)):  # ties need the recency tie-break
        chosen.sort(key=_rank_key)
    hits = [
        Hit(doc.belief, score, explain=partial(_clauses, doc, matches))
        for _, _, doc, score in chosen
    ]
    if index.semantic is None:
        return hits
    return _fused(hits, neighbours, limit)


def _neighbours(
    index: BeliefIndex,
    user_id: str,
    terms: QueryTerms,
    accept: Callable[[AnyBelief], bool],
    known: dict[str, bool],
    docs: dict[str, IndexedDoc],
    named: bool,
) -> list[Neighbour]:
    """The semantic index's neighbours of the turn that `accept` lets through (lock held)."""
    assert index.semantic is not None

    def ok(doc: IndexedDoc) -> bool:
        verdict = known.get(doc.belief.id)
        return accept(doc.belief) if verdict is None else verdict

    ordered = list(docs.values())
    key = (user_id, index.user_version(user_id))
    return index.semantic.neighbours(key, ordered, terms, ok, named=named)


def _fused(hits: list[Hit], neighbours: list[Neighbour], limit: int | None) -> list[Hit]:
    """Name matches and embedding neighbours in one list by reciprocal rank fusion."""
    if not neighbours:
        return hits
    by_id = {h.belief.id: h for h in hits}
    similarity = {doc.belief.id: (doc, cos, shared) for doc, cos, shared in neighbours}
    order = fuse([h.belief.id for h in hits], list(similarity))
    out: list[Hit] = []
    for bid in order:
        hit = by_id.get(bid)
        if bid in similarity:
            doc, cos, shared = similarity[bid]
            why = None if shared is None else f"shared word {shared!r}"
            clause = Clause("semantic", f"cosine {cos:.3f}", cos, "semantic", why)
            if hit is None:
                hit = Hit(doc.belief, cos, [clause])
            else:
                hit = Hit(hit.belief, hit.score, [*hit.clauses, clause])
        assert hit is not None
        out.append(hit)
    return out[:limit] if limit is not None else out


def _ranked(
    scores: dict[str, float], min_score: float, limit: int | None
) -> Iterator[tuple[float, str]]:
    """Candidates best first (ties by id), in rounds: most callers need few, so each round
    finds its score cut among the bare scores (a sort of floats) and pairs up only the
    candidates above it, 4 × `limit` the first time and four times more each next."""
    if limit is None or len(scores) <= 4 * limit:
        pairs = sorted((-s, bid) for bid, s in scores.items() if s >= min_score)
        for negated, bid in pairs:
            yield -negated, bid
        return
    order = sorted(-s for s in scores.values() if s >= min_score)  # best first
    above = float("inf")  # scores from here up were given in an earlier round
    taken = 0
    step = 4 * limit
    while taken < len(order):
        cut = -order[min(len(order), taken + step) - 1]
        pairs = sorted((-s, bid) for bid, s in scores.items() if cut <= s < above)
        taken = bisect_right(order, -cut)  # ties at the cut came in whole
        for score, bid in pairs:
            yield -score, bid
        above = cut
        step *= 4


def _unweighted(bid: str) -> float:
    return 1.0


def _best_weighted(
    scores: dict[str, float],
    factor: Callable[[str], float],
    max_factor: float,
    min_score: float,
    limit: int,
    taken: Callable[[str], bool],
    deadline: Deadline | None = None,
) -> list[tuple[float, str]]:
    """The best `limit` candidates `taken` lets through by weighted score (score × factor,
    at least `min_score`), best first, ties by id: what weighing every candidate and ranking
    them all gives, without weighing them all.

    Candidates are weighed in order of their bare score, and the walk stops at the first
    whose bare score × `max_factor` (the most any factor is) falls below the `limit`-th best
    weighted score taken so far: neither it nor any after it can rank among the best. A turn
    matching thousands of beliefs weighs a few hundred. (Equal bare scores share that bound,
    so the order among them does not matter: the taken are ranked by weighted score and id.)
    Past `deadline` (checked every `DEADLINE_STRIDE` candidates), the walk stops.
    """
    pool: list[tuple[float, str]] = []  # (-weighted score, id) of the candidates taken
    best: list[float] = []  # the `limit` best weighted scores taken, the least first (a heap)
    reach = min_score / max_factor  # a bare score below this cannot reach `min_score`
    for seen, bid in enumerate(sorted(scores, key=scores.__getitem__, reverse=True)):
        score = scores[bid]
        if score < reach or (len(best) >= limit and score * max_factor < best[0]):
            break
        if seen % DEADLINE_STRIDE == DEADLINE_STRIDE - 1 and passed(deadline):
            break
        weighted = score * factor(bid)
        if weighted < min_score or not taken(bid):
            continue
        pool.append((-weighted, bid))
        if len(best) < limit:
            heapq.heappush(best, weighted)
        elif weighted > best[0]:
            heapq.heapreplace(best, weighted)
    pool.sort()
    return [(-w, bid) for w, bid in pool[:limit]]


def _rank_key(entry: tuple[float, str, IndexedDoc, float]) -> tuple[float, float, str]:
    return entry[0], entry[2].recency, entry[1]
