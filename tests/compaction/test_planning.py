"""The pure parts: clusters, survivors, upkeep, re-explained names and the review checks."""

from __future__ import annotations

from datetime import timedelta

from beliefs.model.models import HistoryEvent, utcnow
from compaction.aliases import clean_alias, names_of, re_explained
from compaction.clusters import MAX_TOKEN_SHARE, clusters, duplicates
from compaction.merge import merged_belief, operator_edited, survivor_id, upkeep
from compaction.plan import ClusterPlan
from compaction.prompts import AliasProposal, ClusterReview, ContradictionProposal, MergeProposal
from compaction.review import apply_review, plan_duplicates
from tests.compaction.conftest import USER, belief

NOW = utcnow()


def ids(groups: list[list[object]]) -> list[list[str]]:
    return [[b.canonical_name for b in g] for g in groups]  # type: ignore[attr-defined]


def test_clusters_join_shared_names_words_and_content() -> None:
    a = belief("kubernetes", "Runs on Kubernetes.", aliases=["k8s"])
    b = belief("k8s_ingress", "Uses nginx ingress.", aliases=["k8s"])
    c = belief("ingress_rules", "Rules live in git.")  # shares the word "ingress" with b
    d = belief("raw_driver", "Uses the raw driver.")
    e = belief("driver_choice", "uses the raw driver")  # same content as d
    f = belief("tabs", "Indents with tabs.")
    assert ids(clusters([a, b, c, d, e, f])) == [
        ["kubernetes", "k8s_ingress", "ingress_rules"],
        ["raw_driver", "driver_choice"],
        ["tabs"],
    ]


def test_a_word_many_beliefs_share_links_nothing() -> None:
    many = [belief(f"code_style_{n}", f"Rule {n}.") for n in range(MAX_TOKEN_SHARE + 1)]
    assert len(clusters(many)) == len(many)


def test_duplicates_need_the_same_type_and_agent() -> None:
    a = belief("a", "Uses tabs.")
    b = belief("b", "uses tabs", type="decision")
    c = belief("c", "Uses tabs.", agent_id="cli")
    d = belief("d", "Uses tabs!")
    assert ids(duplicates([a, b, c, d])) == [["a", "d"]]


def test_the_survivor_keeps_every_retired_name_even_when_aliases_are_full() -> None:
    a = belief("alpha", "X.", aliases=[f"a{n}" for n in range(25)], reinforcement_count=2)
    b = belief("beta", "X.", reinforcement_count=3, epistemic_status="inferred")
    c = belief("gamma", "X.", epistemic_status="exploratory", expires_at=NOW)
    merged = merged_belief([a, b, c], now=NOW, reason="r", canonical_name="delta")
    assert merged.aliases[:3] == ["beta", "alpha", "gamma"] and len(merged.aliases) == 25
    assert merged.reinforcement_count == 6 and merged.epistemic_status == "active"
    assert merged.expires_at is None  # one source never expires
    assert merged.id == survivor_id([c.id, b.id, a.id])
    assert merged.provenance["merged_from"][0] == b.id  # most reinforced leads


def test_operator_edits_are_told_apart_by_history() -> None:
    plain = belief("a", "X.", source_type="operator")
    edited = plain.model_copy(
        update={"change_log": [HistoryEvent(at=NOW, event="updated", actor="operator")]}
    )
    by_extractor = plain.model_copy(
        update={"change_log": [HistoryEvent(at=NOW, event="enriched", actor="extractor")]}
    )
    assert not operator_edited(plain) and operator_edited(edited)
    assert not operator_edited(by_extractor)
    assert operator_edited(belief("b", "X.", user_edited=True))


def test_upkeep_decisions() -> None:
    old = NOW - timedelta(days=3)
    items = upkeep(
        [
            belief("gone", "X.", deleted_at=NOW - timedelta(hours=30)),
            belief("recent", "X.", deleted_at=NOW - timedelta(hours=2)),
            belief("late", "X.", expires_at=NOW - timedelta(seconds=1)),
            belief("later", "X.", expires_at=NOW + timedelta(hours=1)),
            belief(
                "ready", "X.", epistemic_status="inferred", reinforcement_count=5, created_at=old
            ),
        ],
        now=NOW,
        grace=timedelta(hours=24),
    )
    assert sorted((i.action, i.reason.split()[0]) for i in items) == [
        ("expire", "expired"),
        ("promote", "reinforced"),
        ("purge", "deleted"),
    ]


def test_re_explained_names() -> None:
    k8s = belief("kubernetes", "X.", aliases=["k8s"])
    pg = belief("postgres", "Y.", aliases=["pg"])
    taken = names_of([k8s, pg])
    found = re_explained(
        [
            "When I say the cluster thing, I mean k8s.",
            '"the old db" means postgres',
            "the big box (kubernetes) is down",
            "By it I mean kubernetes",  # only a stop word: not an alias
            "by the cluster thing I mean mysql",  # no belief answers to mysql
        ],
        [k8s, pg],
        taken,
    )
    assert {(a.belief_id, a.aliases) for a in found} == {
        (k8s.id, ("the cluster thing", "the big box")),
        (pg.id, ("the old db",)),
    }
    assert clean_alias(' "the cluster thing". ') == "the cluster thing"
    assert clean_alias("a very long name of five words") is None


def test_the_review_is_checked_before_anything_is_planned() -> None:
    a = belief("postgres", "Uses Postgres.", aliases=["pg"])
    b = belief("billing_db", "Billing uses Postgres.", aliases=["postgres"])
    c = belief("pg_version", "Postgres 16.", type="decision", aliases=["pg"])
    other = belief("mysql", "Legacy MySQL.")
    plan = ClusterPlan(USER, "domain:code", [a, b, c, other])
    taken = names_of([a, b, c, other])

    def merge(ids: list[str], name: str = "postgres") -> MergeProposal:
        return MergeProposal(
            belief_ids=ids,
            canonical_name=name,
            content="Uses Postgres.",
            why_it_matters="",
            reason="same",
        )

    review = ClusterReview(
        merges=[
            merge([a.id, "b-nope"]),  # unknown id
            merge([a.id, c.id]),  # differ in type
            merge([a.id, b.id], name="mysql"),  # the name belongs to another belief
            merge([a.id, b.id]),  # fine
        ],
        contradictions=[
            ContradictionProposal(belief_ids=[a.id, c.id], reason="merged away"),
            ContradictionProposal(belief_ids=[c.id, other.id], reason="two databases"),
        ],
        aliases=[
            AliasProposal(belief_id=a.id, aliases=["the db", "never said"], evidence="..."),
            AliasProposal(belief_id=c.id, aliases=["pg"], evidence="taken by a and c"),
        ],
    )
    apply_review(plan, review, messages=["the db is slow"], taken=taken, now=NOW)
    [m] = plan.merges
    assert m.source_ids == (a.id, b.id) and m.origin == "model"
    assert [(x.existing_id, x.other_id) for x in plan.contradictions] == [(c.id, other.id)]
    # The alias for a merged belief goes to the belief that replaces it.
    assert [(x.belief_id, x.aliases) for x in plan.aliases] == [(m.survivor.id, ("the db",))]
    assert len(plan.skipped) >= 5


def test_duplicates_are_planned_before_the_model_and_keep_operator_edits() -> None:
    a = belief("a", "Same.")
    b = belief("b", "Same.")
    c = belief("c", "Same.", user_edited=True)
    plan = ClusterPlan(USER, "domain:code", [a, b, c])
    plan_duplicates(plan, now=NOW)
    [m] = plan.merges
    assert m.source_ids == (a.id, b.id) and m.origin == "duplicate"
    assert any(c.id in s for s in plan.skipped)
