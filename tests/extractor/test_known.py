"""What the extraction prompt is shown again when the model's proposal points at a belief."""

from __future__ import annotations

from beliefs.model.models import Belief
from beliefs.store.belief_store import BeliefStore
from extractor.known import known_beliefs, pointed_beliefs, touched_beliefs
from extractor.schema import ExtractionOutput
from tests.extractor.conftest import make_turn
from tests.extractor.fake_llm import extraction, new_belief


def seed(store: BeliefStore, name: str, **kw: object) -> Belief:
    values: dict[str, object] = {
        "user_id": "alice",
        "canonical_name": name,
        "content": f"About {name}.",
        "scope": ["project:billing"],
    }
    values.update(kw)
    return store.create(Belief.model_validate(values))


def pointed(store: BeliefStore, *proposals: dict[str, object], shown: set[str]) -> set[str]:
    output = ExtractionOutput.model_validate(extraction(new_beliefs=list(proposals)))
    turn = make_turn("Heads up: billing now runs on CockroachDB 24 for everything.")
    return {b.canonical_name for b in pointed_beliefs(store, turn, output, shown)}


def test_a_proposal_points_at_beliefs_of_its_name_subject_or_names(store: BeliefStore) -> None:
    seed(store, "database_postgres", aliases=["postgresql"])
    seed(store, "queue_broker", aliases=["rabbitmq"])
    seed(store, "cache_store")
    seed(store, "primary_database", scope=["project:other"])  # another scope: never
    shown = {seed(store, "deploy_target").id}
    crdb = new_belief("primary_database", "Billing runs on CockroachDB 24.")
    assert pointed(store, crdb, shown=shown) == {"database_postgres"}
    kafka = new_belief("event_streaming", "Events go to Kafka.", rejected_alternatives=["RabbitMQ"])
    assert pointed(store, kafka, shown=shown) == {"queue_broker"}
    assert pointed(store, new_belief("deploy_target", "Fly.io."), shown=shown) == set()


def test_a_persona_reference_shows_the_beliefs_it_summarises(store: BeliefStore) -> None:
    carried = seed(store, "answer_length", scope=["user:universal"], pinned=True)
    seed(store, "commit_style", scope=["user:universal"], pinned=True, agent_id="cli")
    seed(store, "loose_note", scope=["user:universal"])  # not pinned: no persona carries it
    rendered = seed(store, "deploy_target", pinned=True)
    output = ExtractionOutput.model_validate(extraction())
    for turn, expected in [
        (make_turn(injected_ids=[rendered.id]), {rendered.id}),
        (
            make_turn(injected_ids=[rendered.id], persona={"version": "v1", "carries": 1}),
            {rendered.id, carried.id},
        ),
        # a job written before the reference lists the persona's beliefs with the rest
        (make_turn(injected_ids=[carried.id, rendered.id]), {rendered.id, carried.id}),
    ]:
        assert {b.id for b in known_beliefs(store, turn, output)} == expected
        assert expected <= {b.id for b in touched_beliefs(store, turn)}
