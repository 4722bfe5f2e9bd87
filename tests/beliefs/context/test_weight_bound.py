"""The weight bound: the most the rules weigh any of a user's beliefs, by the scopes they hold.

Search weighs candidates best first and stops once the bound says none left can rank; too low
a bound loses a belief its rules lift, too high a bound weighs candidates for nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from beliefs.context.assembly import ContextRequest, assemble, weight_bound
from beliefs.index.belief_index import BeliefIndex
from beliefs.model.models import Belief
from beliefs.model.rules import Rule, RuleSet
from beliefs.opening import open_store
from beliefs.search.matcher import Hit, search
from beliefs.store.rule_store import create_rule, update_rule
from beliefs.text.query import parse_query
from tests.beliefs.factory import belief, index_of


def bound(index: BeliefIndex, user_id: str, rules: RuleSet) -> float:
    with index.lock:
        return weight_bound(index, user_id, rules)


def test_the_bound_is_the_most_the_users_own_scopes_earn_and_follows_their_writes() -> None:
    rules = RuleSet((
        Rule(pattern="domain:docs", bonus=0.5),
        Rule(pattern="project:*", bonus=0.25),
        Rule(pattern="domain:notes/${user_id}", bonus=0.4),
        Rule(pattern="domain:faq", bonus=1.0),
    ))  # fmt: skip
    index = index_of(
        belief("a", "alpha", scope=["domain:code"]),
        belief("b", "beta", scope=["project:billing"]),
    )
    assert rules.max_bonus == pytest.approx(3.15)
    assert bound(index, "u1", rules) == pytest.approx(1.25)
    index.upsert(belief("c", "gamma", scope=["domain:docs", "project:atlas"]))
    assert bound(index, "u1", rules) == pytest.approx(1.75)  # the rules of both scopes add up
    index.remove("c")
    assert bound(index, "u1", rules) == pytest.approx(1.25)
    index.upsert(belief("b", "beta", scope=["domain:code"]))  # moved: its scope list goes
    assert bound(index, "u1", rules) == 1.0 + 1e-9
    index.upsert(belief("n", "notes", scope=["domain:notes/u1/drafts"]))  # the user's own
    index.upsert(belief("o", "other", user_id="u2", scope=["domain:notes/u1"]))  # not u2's
    assert bound(index, "u1", rules) == pytest.approx(1.4)
    assert bound(index, "u2", rules) == 1.0 + 1e-9
    assert bound(index, "nobody", rules) == 1.0 + 1e-9
    # Another rule set on the same index has its own bound, not the one kept for these rules.
    assert bound(index, "u1", RuleSet((Rule(pattern="domain:code", bonus=0.3),))) == (
        pytest.approx(1.3)
    )
    assert bound(index, "u1", rules) == pytest.approx(1.4)
    for user in ("u1", "u2"):
        weights = [rules.bonus(doc.belief) for doc in index.user(user).docs.values()]
        assert max(weights) <= bound(index, user, rules) <= max(weights) * (1 + 1e-8)


def kafka_index() -> BeliefIndex:
    """Forty beliefs answering to "kafka" alone, and one answering to it among three aliases
    (a lower bare score) in a scope the rules favour."""
    return index_of(
        *(belief(f"k{i}", f"kafka_note_{i}", ["kafka"]) for i in range(40)),
        belief("docs", "kafka_docs", ["kafka", "broker", "topics"], scope=["domain:docs"]),
        filler=200,
    )


def ranked(hits: list[Hit]) -> list[tuple[str, float]]:
    return [(h.belief.id, h.score) for h in hits]


def searched(
    index: BeliefIndex, rules: RuleSet | None, max_weight: float | None, limit: int = 15
) -> list[Hit]:
    weight = None if rules is None else rules.weight
    return search(
        index,
        "u1",
        parse_query("which kafka setup"),
        lambda b: True,
        weight=weight,
        max_weight=max_weight,
        limit=limit,
    )


def test_a_belief_its_rules_lift_past_better_bare_scores_still_ranks_first() -> None:
    rules = RuleSet((Rule(pattern="domain:docs", bonus=0.9), Rule(pattern="domain:faq", bonus=1)))
    index = kafka_index()
    assert "docs" not in [h.belief.id for h in searched(index, None, None)]  # bare: below 15
    request = ContextRequest("u1", ("domain:code", "domain:docs"), "which kafka setup")
    context = assemble(index, request, rules=rules)
    assert context.relevant[0].belief.id == "docs"
    every = searched(kafka_index(), rules, None)  # every candidate weighed, then ranked
    assert ranked(searched(index, rules, bound(index, "u1", rules))) == ranked(every)


def test_a_turn_weighs_fewer_candidates_under_the_bound_than_under_every_rule_at_once() -> None:
    rules = RuleSet((Rule(pattern="domain:docs", bonus=0.1), Rule(pattern="domain:faq", bonus=1)))
    under_bound, under_all = kafka_index(), kafka_index()
    request = ContextRequest("u1", ("domain:code", "domain:docs"), "which kafka setup")
    bounded = assemble(under_bound, request, rules=rules, count_tokens=len).relevant
    every = searched(under_all, rules, rules.max_bonus, limit=30)
    assert ranked(bounded) == ranked(every)[:20]

    def weighed(index: BeliefIndex) -> int:
        docs = index.user("u1").docs.values()
        return sum(1 for doc in docs if doc.weighed_by is rules.weight)

    assert weighed(under_bound) < weighed(under_all)


def test_rules_and_beliefs_written_between_turns_move_the_bound(tmp_path: Path) -> None:
    with open_store(tmp_path / "t.duckdb") as store:
        notes = [belief(f"k{i}", f"kafka_note_{i}", ["kafka"], user_id="u") for i in range(30)]
        filler = [belief(f"f{i}", f"other_{i}", [f"filler{i}"], user_id="u") for i in range(200)]
        store.import_beliefs([*notes, *filler])
        request = ContextRequest("u", ("domain:code", "domain:manuals"), "which kafka setup")
        assert len(assemble(store.index, request, rules=store.rules).relevant) == 20
        # A rule favouring a scope the user has no belief in leaves the bound where it was;
        # a belief written there afterwards, whose bare score ranks it last, must rank first.
        create_rule(store, Rule(pattern="domain:manuals", bonus=0.9))
        assert bound(store.index, "u", store.rules) == 1.0 + 1e-9
        assemble(store.index, request, rules=store.rules)
        manual = Belief(
            user_id="u",
            canonical_name="kafka_manual",
            aliases=["kafka", "broker", "topics"],
            scope=["domain:manuals"],
        )
        store.create(manual)
        context = assemble(store.index, request, rules=store.rules)
        assert context.relevant[0].belief.canonical_name == "kafka_manual"
        # The rule made weaker: the bound follows it and the manual falls back.
        rule = next(r for r in store.rules.rules if r.pattern == "domain:manuals")
        update_rule(store, rule.id, {"bonus": 0.0})
        context = assemble(store.index, request, rules=store.rules)
        names = [h.belief.canonical_name for h in context.relevant]
        assert "kafka_manual" not in names
        assert bound(store.index, "u", store.rules) == 1.0 + 1e-9
