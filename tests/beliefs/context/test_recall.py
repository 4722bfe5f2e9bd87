from __future__ import annotations

from datetime import timedelta

from beliefs.context.assembly import ContextRequest, assemble
from beliefs.context.recall import recall
from tests.beliefs.factory import T0, belief, index_of

NOW = T0 + timedelta(days=10)


def test_recall_finds_what_injection_withholds_and_says_why() -> None:
    index = index_of(
        belief("demand", "kafka_manual", ["kafka"], delivery="on_demand"),
        belief("rejected", "kafka_bad", ["kafka"], review_state="rejected"),
        belief("expired", "kafka_tmp", ["kafka"], expires_at=NOW - timedelta(days=1)),
        belief("low", "kafka_import", ["kafka"], source_type="import"),
        belief(
            "old", "kafka_old", ["kafka"], superseded_by="demand", epistemic_status="superseded"
        ),
        belief("gone", "kafka_gone", ["kafka"], deleted_at=T0),
        filler=40,
    )
    injected = assemble(
        index, ContextRequest("u1", ("domain:code",), "kafka", min_trust=2), now=NOW
    )
    assert injected.relevant == []
    found = {r.hit.belief.id: r.tags for r in recall(index, "u1", "kafka", now=NOW)}
    assert found == {
        "demand": ("on_demand",),
        "rejected": ("rejected",),
        "expired": ("expired",),
        "low": (),
    }
    with_history = {r.hit.belief.id for r in recall(index, "u1", "kafka", include_superseded=True)}
    assert "old" in with_history and "gone" not in with_history
    assert recall(index, "u1", "kafka", scopes=["domain:writing"]) == []


def test_recall_asks_for_a_word_so_every_sense_of_it_is_meant() -> None:
    # "Loki" is also a god and a film character: a turn must show the belief's sense, a
    # search for the word need not.
    index = index_of(
        belief("l", "logging_loki", ["Loki"], content="Logs are shipped to Grafana Loki."),
        filler=20,
    )
    turn = assemble(index, ContextRequest("u1", ("domain:code",), "obsessed with Loki"), now=NOW)
    assert turn.relevant == []
    assert [r.hit.belief.id for r in recall(index, "u1", "loki", now=NOW)] == ["l"]
