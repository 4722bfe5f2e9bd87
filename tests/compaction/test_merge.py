"""Merging: the new belief supersedes every source and answers to every old name."""

from __future__ import annotations

from beliefs.context.assembly import ContextRequest, assemble
from beliefs.store.belief_store import BeliefStore
from tests.compaction.conftest import USER, belief, compact, review, state
from tests.extractor.fake_llm import FakeChatModel


def found_by(store: BeliefStore, query: str) -> list[str]:
    ctx = assemble(store.index, ContextRequest(USER, ("domain:code",), query))
    return [h.belief.id for h in ctx.relevant]


def test_two_overlapping_beliefs_merge_into_one_found_by_every_old_name(
    store: BeliefStore,
) -> None:
    a = store.create(
        belief("kubernetes", "Deploys services on Kubernetes.", aliases=["k8s"]),
        actor="extractor",
    )
    b = store.create(
        belief(
            "container_platform",
            "Runs every service on a Kubernetes cluster.",
            aliases=["kubernetes", "kube"],
            reinforcement_count=3,
        ),
        actor="extractor",
    )
    llm = FakeChatModel(
        [
            review(
                merges=[
                    {
                        "belief_ids": [a.id, b.id],
                        "canonical_name": "kubernetes",
                        "content": "Deploys every service on a Kubernetes cluster.",
                        "why_it_matters": "Give deployment advice for Kubernetes.",
                        "reason": "both say the services run on Kubernetes",
                    }
                ]
            )
        ]
    )
    report = compact(store, llm)

    assert report.errors == [] and report.merged == 1 and report.superseded == 2
    [survivor] = store.list(user_id=USER)
    assert survivor.canonical_name == "kubernetes"
    assert survivor.content == "Deploys every service on a Kubernetes cluster."
    assert survivor.reinforcement_count == 4
    assert {"container_platform", "k8s", "kube"} <= set(survivor.aliases)
    for old in (a, b):
        row = store.get(old.id)
        assert row.superseded_by == survivor.id and row.epistemic_status == "superseded"
    assert [x.id for x in store.chain(a.id)][-1] == survivor.id
    events = [e.event for e in store.history(survivor.id)]
    assert events.count("supersedes") == 2 and "merged_from" in events
    for name in ("kubernetes", "container platform", "k8s", "kube"):
        assert found_by(store, f"how do I scale {name}") == [survivor.id], name
    assert store.verify() == []


def test_exact_duplicates_merge_without_a_model(store: BeliefStore) -> None:
    a = store.create(belief("raw_driver", "Uses the raw MongoDB driver."))
    b = store.create(
        belief(
            "mongo_driver",
            "uses the raw MongoDB driver",
            rejected_alternatives=["mongoose"],
            pinned=True,
        )
    )
    report = compact(store)
    assert report.merged == 1
    [survivor] = store.list(user_id=USER)
    assert store.get(a.id).superseded_by == survivor.id == store.get(b.id).superseded_by
    assert survivor.rejected_alternatives == ["mongoose"] and survivor.pinned
    assert survivor.canonical_name in ("raw_driver", "mongo_driver")
    assert {"raw_driver", "mongo_driver"} - {survivor.canonical_name} <= set(survivor.aliases)
    assert store.verify() == []


def test_operator_edited_beliefs_are_never_merged_away(store: BeliefStore) -> None:
    a = store.create(belief("tabs", "Indents with tabs.", source_type="operator"))
    store.update(a.id, {"why_it_matters": "Indent every example with tabs."})
    b = store.create(belief("indentation", "Indents with tabs."))
    c = store.create(belief("tab_width", "Tab width is 4.", user_edited=True, aliases=["tabs"]))
    llm = FakeChatModel(
        [
            review(
                merges=[
                    {
                        "belief_ids": [a.id, b.id, c.id],
                        "canonical_name": "tabs",
                        "content": "Indents with tabs of width 4.",
                        "why_it_matters": "Use tabs.",
                        "reason": "all about tabs",
                    }
                ]
            )
        ]
    )
    before = state(store)
    report = compact(store, llm)
    assert state(store) == before
    assert report.merged == 0
    assert {x.id for x in store.list(user_id=USER)} == {a.id, b.id, c.id}
