"""The rules' scoring: clause scores summed per belief, everyday words counted only when
corroborated (`beliefs.search.corroboration`), postings that cannot reach the minimum score
read only for beliefs a stronger clause found. These rules are the default; the relevance
model (`beliefs.search.relevance`, behind `relevance_model`) reads which clauses the sense
check corroborated as features of its own, and with corroboration off they are the
reference's scoring.
"""

from __future__ import annotations

from collections.abc import Collection, Container
from dataclasses import dataclass

from beliefs.index.bm25 import K1, B, length_norms
from beliefs.index.indexed_doc import IndexedDoc
from beliefs.index.user_postings import UserPostings
from beliefs.search.clauses import Matched
from beliefs.search.corroboration import (
    OTHER_CLAUSE,
    SIBLING,
    TurnSigns,
    Witness,
    may_be_topic,
    needs_sense,
    topic,
)
from beliefs.search.deadline import Deadline, passed
from beliefs.search.hits import Clause, Match
from beliefs.search.in_names import in_names, short_code
from beliefs.search.kind_words import NameWords
from beliefs.text.query import QueryTerms

MAX_SENSE_CHECKS = 256  # beliefs whose sense check one everyday word's clause may ask for

# (belief id, token) -> why the everyday word counts ("" for an inflected topic: nothing needed)
Corroborated = dict[tuple[str, str], str]


# One clause's postings to walk: (token, (rate, ids) groups, for a gated one its query word,
# the turn's words that reached it)
Walk = tuple[str, list[tuple[float, Collection[str]]], str | None, tuple[str, ...]]


def accumulate(
    postings: UserPostings,
    terms: QueryTerms,
    canonical: Matched,
    aliases: Matched,
    names: NameWords,
    extended: bool = True,
    floor: float = 0.0,
    deadline: Deadline | None = None,
    sense: bool = True,
    named: frozenset[str] | None = None,
    every_clause: bool = False,
) -> tuple[dict[str, float], Corroborated]:
    """Each matched belief's score, summed clause by clause in a fixed order; clauses of an
    everyday name (gated) count last, and only where corroborated.

    `floor`: the score below which a belief cannot be returned (the minimum score over the
    largest weight). The weakest clauses, whose best rates together stay below it, cannot lift
    a belief to it alone, so their postings are read only for beliefs a stronger clause found
    (MaxScore's non-essential lists): a common alias costs what its few useful beliefs cost.

    Past `deadline`, no further clause's postings are read (the first always is): the scores
    are those of the clauses read by then. `sense` False: no clause is gated (a deliberate
    search for a word, not a turn to read). `named`: the turn's `in_names` when the caller has
    worked them out (its hits' clauses need them too). `every_clause`: gated clauses count
    whether corroborated or not (the relevance model weighs every candidate, and reads which
    the sense check corroborated as a feature).
    """
    if named is None:
        named = in_names(terms) if extended and sense else frozenset()
    walks = _walks(postings, canonical, aliases, names, extended and sense, named, terms.languages)
    among = _essential(walks, floor)
    scores: dict[str, float] = {}
    get = scores.get
    for _, groups, gate, _ in walks:
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
    corroborated = _corroborate(postings, terms, walks, among, deadline, scores)
    for token, groups, gate, _ in walks:
        if gate is None:
            continue
        for rate, ids in groups:
            for bid in ids if among is None else among.intersection(ids):
                if every_clause or (bid, token) in corroborated:
                    scores[bid] = get(bid, 0.0) + rate
    return scores, corroborated


def _corroborate(
    postings: UserPostings,
    terms: QueryTerms,
    walks: list[Walk],
    among: set[str] | None,
    deadline: Deadline | None,
    scored: Container[str] = (),
) -> Corroborated:
    """Which gated clauses count, and why ("" for an inflected topic, which needs nothing).

    First each clause on its own evidence (`Witness.own_reason`); then a clause that has none
    counts when another word of the turn reached the same belief by a clause that counts
    ("figure" with "Prism" written as a name), or by one that has none either, apart from it
    (`_apart`: "để Thảo lo tiệm … chị ấy mệt" for "Thảo" and "chị Thảo"); then a topic typed
    as the belief writes it, or a short code, counts when a belief of its scope was named too,
    by a clause that counts or by its own topic ("does the protagonist's viewpoint hold?",
    "Dagster fails every DBT test"), and for a topic, when that scope is not most of the user's
    beliefs (`SIBLING_SHARE`).

    An everyday word more than MAX_SENSE_CHECKS of the user's beliefs hold names none of them
    by itself: written as a name (or, for a kind word, asked for; for a kind word or a short
    code, in a turn too short for another sense) it counts for all of them at once, otherwise
    its sense is checked only for the beliefs a clause that counts found (`scored`), not for
    each of its thousands (a million beliefs' "django"). So is a kind word's clause once the
    turn's kind words have had MAX_SENSE_CHECKS checks: many kind words, each reaching a few
    names held by hundreds of beliefs, cost no more than one such word.
    """
    docs = postings.docs
    found: Corroborated = {}
    confirmed: dict[str, set[str]] = {}  # belief -> the turn's words whose clause counts
    pending: list[tuple[str, str, str]] = []
    signs: TurnSigns | None = None
    checks = 0  # beliefs a kind word's sense was checked for one by one
    for token, groups, word, _ in walks:
        if word is None:
            continue
        if passed(deadline):
            break
        if signs is None:
            signs = TurnSigns.read(terms)
        name = token.removesuffix(KIND)
        kind = name != token
        witness = Witness(terms, word, name, signs, kind=kind)
        for _, ids in groups:
            chosen = ids if among is None else among.intersection(ids)
            if len(chosen) > MAX_SENSE_CHECKS or (kind and checks >= MAX_SENSE_CHECKS):
                why = witness.everywhere()
                if why is not None:
                    for bid in chosen:
                        found[bid, token] = why
                        confirmed.setdefault(bid, set()).add(word)
                    continue
                chosen = [bid for bid in chosen if bid in scored]
            if kind:
                checks += len(chosen)
            for bid in chosen:
                why = witness.own_reason(docs[bid])
                if why is None:
                    pending.append((bid, token, word))
                    continue
                found[bid, token] = why
                confirmed.setdefault(bid, set()).add(word)
    topics: list[tuple[str, str, str]] = []
    reached = _reached_by(walks, {bid for bid, _, _ in pending}) if pending else {}
    maybe: dict[str, bool] = {}  # token -> whether it may be a topic at all
    apart = _apart(terms, pending) if len(pending) > 1 else set()
    for bid, token, word in pending:
        if _besides(reached.get(bid), word) or _besides(confirmed.get(bid), word) or bid in apart:
            found[bid, token] = OTHER_CLAUSE
            continue
        can = maybe.get(token)
        if can is None:
            can = maybe[token] = may_be_topic(token)
        if (can and topic(docs[bid], token)) or short_code(token):
            topics.append((bid, token, word))
    if topics:
        _siblings(postings, walks, confirmed, topics, found)
    return found


# A scope that holds more than this share of the user's beliefs tells nothing of a turn: a belief
# of it named in the turn is no sign that a topic of the same scope is meant ("ferry deploy …
# beacon hangs" for a user whose every belief is of one scope)
SIBLING_SHARE = 2 / 3


def _siblings(
    postings: UserPostings,
    walks: list[Walk],
    confirmed: dict[str, set[str]],
    topics: list[tuple[str, str, str]],
    found: Corroborated,
) -> None:
    """Each pending topic or short code (belief, token, word) counts, into `found`, when a
    belief of its scope was named too by another word of the turn: for a topic, of a scope
    that holds at most SIBLING_SHARE of the user's beliefs."""
    docs = postings.docs
    telling: dict[str, bool] = {}  # scope -> whether it holds few enough beliefs to tell
    asked: list[tuple[str, str, str, tuple[str, ...]]] = []  # topics, with the scopes that tell
    for bid, token, word in topics:
        scopes = tuple(docs[bid].belief.scope)
        if not short_code(token):
            for scope in scopes:
                if scope not in telling:
                    telling[scope] = postings.scope_share(scope) <= SIBLING_SHARE
            scopes = tuple(scope for scope in scopes if telling[scope])
        if scopes:
            asked.append((bid, token, word, scopes))
    if not asked:  # no scope can tell: no posting is read for one
        return
    wanted = {scope for *_, scopes in asked for scope in scopes}
    siblings = _reached_scopes(postings, walks, confirmed, wanted)
    for bid, _, word in topics:  # two topics of one scope: the turn is in that world
        for scope in wanted.intersection(docs[bid].belief.scope):
            siblings.setdefault(scope, set()).add(word)
    seen: dict[tuple[tuple[str, ...], str], bool] = {}  # (scopes, word) -> a sibling
    for bid, token, word, scopes in asked:
        sibling = seen.get((scopes, word))
        if sibling is None:
            sibling = seen[scopes, word] = any(_besides(siblings.get(s), word) for s in scopes)
        if sibling:
            found[bid, token] = SIBLING


def _apart(terms: QueryTerms, pending: list[tuple[str, str, str]]) -> set[str]:
    """The beliefs two words of the turn reached apart, neither inside nor next to the other,
    each by a clause that waits for corroboration ("để Thảo lo tiệm … sợ chị ấy mệt" for the
    belief named "Thảo" and "chị Thảo"): two of its names in one turn are not chance, but two
    words side by side may be one phrase of another sense ("bahasa inggris")."""
    words: dict[str, set[str]] = {}
    for bid, _, word in pending:
        words.setdefault(bid, set()).add(word)
    out = set()
    text = ""  # the turn's words, joined once a belief has two to tell apart
    for bid, said in words.items():
        if len(said) < 2:
            continue
        listed = sorted(said)
        text = text or f" {' '.join(terms.sequence)} "
        if any(
            set(a.split()).isdisjoint(b.split()) and not _side_by_side(text, a, b)
            for i, a in enumerate(listed)
            for b in listed[i + 1 :]
        ):
            out.add(bid)
    return out


def _side_by_side(text: str, a: str, b: str) -> bool:
    """Whether `text` (the turn's words, spaced, with a space at each end) writes `a` and `b`
    next to each other, in either order."""
    return f" {a} {b} " in text or f" {b} {a} " in text


def _besides(words: set[str] | None, word: str) -> bool:
    """Whether `words` holds a word other than `word`."""
    return words is not None and (len(words) > 1 or (bool(words) and word not in words))


def _reached_scopes(
    postings: UserPostings, walks: list[Walk], confirmed: dict[str, set[str]], wanted: set[str]
) -> dict[str, set[str]]:
    """Each scope of `wanted` -> the turn's words that reached a belief of it by a clause that
    counts. A clause's postings are read only until each wanted scope has its words: a common
    word's thousands of beliefs are not all looked at."""
    docs = postings.docs
    out: dict[str, set[str]] = {}
    for _, groups, gate, queries in walks:
        if gate is not None:
            continue
        words = set(queries)
        missing = {scope for scope in wanted if not words <= out.get(scope, set())}
        for _, ids in groups:
            if not missing:
                break
            for bid in ids:
                found = missing.intersection(docs[bid].belief.scope)
                if found:
                    for scope in found:
                        out.setdefault(scope, set()).update(words)
                    missing -= found
                    if not missing:
                        break
    for bid, reached in confirmed.items():
        for scope in wanted.intersection(docs[bid].belief.scope):
            out.setdefault(scope, set()).update(reached)
    return out


def _walks(
    postings: UserPostings,
    canonical: Matched,
    aliases: Matched,
    names: NameWords,
    gated: bool,
    named: frozenset[str],
    languages: frozenset[str],
) -> list[Walk]:
    """The postings of every matched clause, gated ones (when `gated`) marked with their query
    word."""
    norms = length_norms(postings.avg_alias_len)
    walks: list[Walk] = []
    for token, (base, _, _, how, query) in canonical.items():
        gate = query if gated and needs_sense(token, how, query, named, languages) else None
        walks.append((token, [(base, postings.canonical_ids(token))], gate, (query,)))
    for token, words in names.items():
        ids = postings.canonical_ids(token)
        queries = tuple(q for _, _, q in words)
        gate = queries[0] if gated and kind_gated(queries) else None
        walks.append((kind_key(token), [(sum(b for b, _, _ in words), ids)], gate, queries))
    for token, (base, _, _, how, query) in aliases.items():
        gate = query if gated and needs_sense(token, how, query, named, languages) else None
        groups = [(base * norms[n], ids) for n, ids in postings.alias_groups(token)]
        walks.append((token, groups, gate, (query,)))
    return walks


KIND = "\x1f"  # marks a kind word's clause apart from a match of the whole canonical name


def kind_key(canonical: str) -> str:
    """The key a canonical name's kind-word clause is walked and corroborated under."""
    return canonical + KIND


def kind_gated(words: Collection[str]) -> bool:
    """Whether a kind-word clause needs the belief's world in the turn: it holds one word of the
    name ("our queues", "the gas safety man"), not two ("what file format")."""
    return len(set(words)) == 1


def _reached_by(walks: list[Walk], among: set[str]) -> dict[str, set[str]]:
    """For the beliefs of `among`, the turn's words that reached each by a clause that counts
    ungated ("Tomás" matching one alias exactly and another by one edit is still one word)."""
    out: dict[str, set[str]] = {}
    for _, groups, gate, queries in walks:
        if gate is not None:
            continue
        for _, ids in groups:
            for bid in among.intersection(ids):
                out.setdefault(bid, set()).update(queries)
    return out


def _essential(walks: list[Walk], floor: float) -> set[str] | None:
    """The beliefs that may reach `floor`: those on an essential posting (None: every posting
    is essential, or too few are not to be worth sparing).

    The non-essential postings are the weakest whose best rates sum below `floor`; a belief on
    none but them scores below it.
    """
    if floor <= 0.0 or len(walks) < 2:
        return None
    by_rate = sorted(
        ((max((rate for rate, _ in groups), default=0.0), groups) for _, groups, _, _ in walks),
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


def _counts(doc: IndexedDoc, token: str, how: Match, query: str, m: Matches) -> bool:
    """Whether a matched token scored for `doc` (an everyday name needs corroboration)."""
    if not m.extended or (doc.belief.id, token) in m.corroborated:
        return True
    return not needs_sense(token, how, query, m.named, m.languages)


@dataclass(frozen=True)
class Matches:
    """Everything one turn matched, kept so a hit's clauses can be rebuilt when read."""

    avg_alias_len: float
    canonical: Matched
    aliases: Matched
    names: NameWords
    corroborated: Corroborated
    extended: bool = True
    # the turn's words inside a name of several words, after a word of kinship, or codes of two
    # or three letters written in capitals (`in_names`)
    named: frozenset[str] = frozenset()
    languages: frozenset[str] = frozenset()  # those the turn is written in besides English


def matched_clauses(doc: IndexedDoc, m: Matches) -> list[Clause]:
    """Rebuild why one document matched (only for hits whose clauses are read)."""
    out: list[Clause] = []
    bid = doc.belief.id
    if doc.canonical in m.canonical:
        base, fld, label, how, query = m.canonical[doc.canonical]
        if _counts(doc, doc.canonical, how, query, m):
            why = m.corroborated.get((bid, doc.canonical)) or None
            out.append(Clause(fld, label, base, how, why))
    words = m.names.get(doc.canonical, ())
    if words:
        key = (bid, kind_key(doc.canonical))
        if not m.extended or key in m.corroborated or not kind_gated([q for _, _, q in words]):
            why = m.corroborated.get(key) or None
            for base, label, _ in words:
                out.append(Clause("canonical_name", label, base, "name_word", why))
    dl = len(doc.aliases)
    norm = 1.0 / (1.0 + K1 * (1.0 - B + B * dl / m.avg_alias_len))
    for i, token in enumerate(doc.aliases):
        fld = "alias" if i < doc.alias_count else "rejected_alternative"
        if token in m.aliases:
            base, _, label, how, query = m.aliases[token]
            if _counts(doc, token, how, query, m):
                why = m.corroborated.get((bid, token)) or None
                out.append(Clause(fld, label, base * norm, how, why))
    out.sort(key=lambda c: -c.score)
    return out
