"""Compact postings and pruned scoring return what the index returned before them.

`tests/data/search_outcomes.json` was written by `tests.beliefs.search_outcomes` on the code
before postings held lone members as themselves, alias postings grouped by alias count and
scoring skipped postings that cannot reach the minimum score. The corpus gives that skipping
work to do: one name sits on half the beliefs, an everyday word on a quarter. It was written
again when matching itself changed (an everyday word of the turn is no typo of an alias of
another stem, a kind word in code is none), after checking those two changes alone made the
difference, and again for the sense check (a name with another sense needs corroboration),
after checking that scoring with every posting read gives the same outcomes as pruned scoring,
and for a topic counted by a short turn only in six words or fewer (one query of the 165
changes: "works is so been like snowflake it and and fits about?"), and when "the" stopped
pointing at the user's own topic (44 of the 165 searches, all of them by that change alone),
and when a rare word a belief writes as a name came to need corroboration (2 searches: the
misspelt "strybook" for the tool Storybook, and one whose only clause was such a word).
"""

from __future__ import annotations

import json
import random
from dataclasses import fields
from pathlib import Path
from typing import Any

from beliefs.index.belief_index import BeliefIndex
from beliefs.index.user_postings import MAX_NAME_WORD_NAMES
from beliefs.model.rules import DEFAULT_RULES, RuleSet
from beliefs.search.matcher import _best_weighted, _ranked, search
from beliefs.text.query import parse_query
from bench.corpus import make_queries
from tests.beliefs.search_outcomes import USER, build, outcomes

RECORDED = Path(__file__).resolve().parents[1].parent / "data" / "search_outcomes.json"


def test_search_and_context_outcomes_match_those_recorded_before_the_change() -> None:
    before = json.loads(RECORDED.read_text())
    now = json.loads(json.dumps(outcomes()))
    for part in ("searches", "limited", "contexts"):
        assert len(now[part]) == len(before[part]) > 100
        for n, (old, new) in enumerate(zip(before[part], now[part], strict=True)):
            assert new == old, f"{part}, query {n}: {new!r:.300} != {old!r:.300}"
    assert sum(1 for count, _, _ in now["searches"] if count) > 100  # most queries hit


def test_postings_after_edits_and_removals_equal_postings_built_fresh() -> None:
    churned = build()
    fresh = BeliefIndex()
    for user in (USER, "other-user"):
        fresh.load(sorted(churned.beliefs(user), key=lambda b: b.id))
    for user in (USER, "other-user"):
        a, b = churned.user(user), fresh.user(user)
        assert len(a.docs) > 500
        for f in fields(a):
            if f.name == "deletes":
                assert _plain(dict(a.deletes.items())) == _plain(dict(b.deletes.items()))
            elif f.name == "name_words":
                assert _looked_up(a.name_words) == _looked_up(b.name_words)
            elif f.name not in ("stem_cache", "version", "derived"):
                assert _plain(getattr(a, f.name)) == _plain(getattr(b, f.name)), f.name


def _looked_up(name_words: dict[str, Any]) -> dict[str, object]:
    """Name words as search reads them: a word of more than MAX_NAME_WORD_NAMES names by its
    count (held as a count or as its names, as its history had it), the others by names."""
    out: dict[str, object] = {}
    for word, held in name_words.items():
        count = held if isinstance(held, int) else len(_plain(held))  # type: ignore[arg-type]
        out[word] = count if count > MAX_NAME_WORD_NAMES else _plain(held)
    return out


def _plain(value: object) -> object:
    """A posting map with each posting as a set: a few members sit in a tuple, in the order
    they came, which differs between an index edited and one built fresh."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, str):
        return frozenset({value})
    if isinstance(value, tuple | set | list):
        return frozenset(value)
    return value


def test_ranking_in_rounds_gives_every_candidate_in_order() -> None:
    rng = random.Random(5)
    for trial in range(200):
        size = rng.randrange(0, 400)
        # few distinct scores, so ties fall on the rounds' cuts
        scores = {f"b{i}": float(rng.randrange(0, 12)) for i in range(size)}
        limit = rng.choice((1, 3, 5, 25))
        expected = sorted((-s, bid) for bid, s in scores.items() if s >= 3.0)
        got = list(_ranked(scores, 3.0, limit))
        assert got == [(-s, bid) for s, bid in expected], trial


def test_weighing_only_the_best_candidates_picks_what_weighing_them_all_picks() -> None:
    rng = random.Random(11)
    for trial in range(300):
        size = rng.randrange(0, 500)
        # scores and factors whose products tie exactly (8 × 1.25 = 10 × 1.0), so a candidate
        # walked late can tie the best taken before it and must still win on its id
        scores = {f"b{i}": float(rng.choice((2, 4, 5, 8, 10, 12, 16))) for i in range(size)}
        factors = {bid: rng.choice((0.8, 1.0, 1.25)) for bid in scores}
        refused = {bid for bid in scores if rng.random() < 0.4}
        limit = rng.choice((1, 3, 5, 25))
        weighted = {bid: s * factors[bid] for bid, s in scores.items()}
        expected = [(w, bid) for w, bid in _ranked(weighted, 3.0, None) if bid not in refused][
            :limit
        ]
        got = _best_weighted(
            scores, factors.__getitem__, 1.25, 3.0, limit, lambda bid, out=refused: bid not in out
        )
        assert got == expected, trial


def test_a_weighted_limited_search_equals_weighing_every_candidate() -> None:
    index = build()
    rules = RuleSet(DEFAULT_RULES)
    assert rules.has_bonuses
    pruned = 0
    for i, query in enumerate(make_queries(120)):
        terms = parse_query(f"{query} (turn {i})")
        for limit in (3, 25):
            accept = lambda b: "project:billing" not in b.scope  # noqa: E731
            every = search(index, USER, terms, accept, weight=rules.bonus, limit=limit)
            best = search(
                index,
                USER,
                terms,
                accept,
                weight=rules.bonus,
                limit=limit,
                max_weight=rules.max_bonus,
            )
            assert [(h.belief.id, h.score) for h in best] == [
                (h.belief.id, h.score) for h in every
            ], (i, limit)
            pruned += len(best) == limit
    assert pruned > 80  # many searches filled their limit
