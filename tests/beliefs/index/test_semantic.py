"""Semantic recall: the fusion, the gate a neighbour passes, and the packaged encoder where it
is installed (CI installs it): every suite with semantic recall on."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from beliefs.evaluation import CaseResult, StoreEvalBackend, load_personas, run_cases, run_sessions
from beliefs.index.encoder import Encoder
from beliefs.index.semantic import enable, fuse
from beliefs.model.models import Belief
from beliefs.opening import open_store
from beliefs.search.matcher import Hit, search
from beliefs.store.interchange import read_file
from beliefs.text.query import parse_query
from tests.beliefs.factory import belief, index_of

HERE = Path(__file__).parent.parent
ROLLBACK = "how do we roll back a bad release?"


def test_reciprocal_rank_fusion_lifts_what_both_lists_hold() -> None:
    assert fuse(["a", "b", "c"], ["c", "d"]) == ["c", "a", "b", "d"]
    assert fuse(["a"], []) == ["a"]


class GivenVectors:
    """Stands in for the model: a belief's vector is given by its canonical name (its text
    starts with it), the turn's by its text; unknown texts are orthogonal to all."""

    def __init__(self, vectors: dict[str, Sequence[float]]) -> None:
        self.vectors = vectors

    def encode(self, texts: Sequence[str]) -> Any:
        rows = []
        for text in texts:
            key = next((k for k in self.vectors if text.startswith(k)), None)
            vector = np.asarray(self.vectors[key] if key else [0.0, 0.0, 0.0, 1.0], np.float32)
            rows.append(vector / np.linalg.norm(vector))
        return np.stack(rows)


def near(cosine: float, axis: int = 0) -> list[float]:
    """A unit vector at `cosine` from the turn's (axis 0), leaning towards `axis`."""
    out = [cosine, 0.0, 0.0, 0.0]
    out[axis] += (1 - cosine**2) ** 0.5
    return out


DEPLOY = belief("d", "deploy_argocd", ["Argo CD"], content="Rollback is a git revert.")
FLAGS = belief("f", "feature_flags", ["LaunchDarkly"], content="Flags older than 90 days go.")


def semantic_hits(vectors: dict[str, Sequence[float]], *beliefs: Belief) -> list[Hit]:
    index = index_of(*beliefs, filler=5)
    enable(index, GivenVectors({ROLLBACK: [1, 0, 0, 0], **vectors}))
    return search(index, "u1", parse_query(ROLLBACK), lambda b: b.user_id == "u1")


def test_a_weak_neighbour_counts_when_the_turn_shares_a_word_with_its_text() -> None:
    hits = semantic_hits({"deploy argocd": near(0.4, 1)}, DEPLOY, FLAGS)
    assert [h.belief.id for h in hits] == ["d"]
    clause = hits[0].clauses[0].as_dict()
    assert clause["match"] == "semantic" and clause["corroborated"] == "shared word 'roll back'"


def test_a_weak_neighbour_sharing_no_word_does_not_count() -> None:
    assert semantic_hits({"feature flags": near(0.45, 1)}, FLAGS) == []


def test_a_weak_neighbour_counts_only_as_the_most_similar_belief() -> None:
    hits = semantic_hits({"deploy argocd": near(0.35, 1), "feature flags": near(0.45, 2)},
                         DEPLOY, FLAGS)  # fmt: skip
    assert hits == []


def test_a_weak_neighbour_does_not_count_beside_a_name_match() -> None:
    release = belief("r", "release_train", ["bad release"], content="Ships on Tuesdays.")
    hits = semantic_hits({"deploy argocd": near(0.4, 1)}, DEPLOY, release)
    assert [h.belief.id for h in hits] == ["r"]  # a name matched: the weak "d" is left out
    hits = semantic_hits({"deploy argocd": near(0.6, 1)}, DEPLOY, release)
    assert {h.belief.id for h in hits} == {"r", "d"}  # a strong neighbour still counts


def test_a_belief_the_turn_may_not_see_does_not_outrank_one_it_may() -> None:
    hidden = belief("h", "hidden_thing", user_id="u2", content="Roll back everything.")
    hits = semantic_hits({"deploy argocd": near(0.35, 1), "hidden thing": near(0.45, 2)},
                         DEPLOY, hidden)  # fmt: skip
    assert [h.belief.id for h in hits] == ["d"]


def test_a_strong_neighbour_counts_by_itself() -> None:
    hits = semantic_hits({"feature flags": near(0.6, 1)}, FLAGS)
    assert [h.belief.id for h in hits] == ["f"]
    assert "corroborated" not in hits[0].clauses[0].as_dict()


@pytest.mark.parametrize(
    "turn",
    [
        "wie machen wir ein rollback, wenn ein release kaputt ist?",  # German, told
        "rollback ya release mbaya tunafanyaje haraka",  # Swahili: too few English words
        "배포 롤백 어떻게 해요",  # Hangul
    ],
)
def test_a_turn_the_model_cannot_read_gets_no_neighbour(turn: str) -> None:
    index = index_of(FLAGS, filler=5)
    enable(index, GivenVectors({turn: [1, 0, 0, 0], "feature flags": near(0.9, 1)}))
    assert search(index, "u1", parse_query(turn), lambda b: b.user_id == "u1") == []
    english = "how do we roll back a release that broke?"
    enable(index, GivenVectors({english: [1, 0, 0, 0], "feature flags": near(0.9, 1)}))
    hits = search(index, "u1", parse_query(english), lambda b: b.user_id == "u1")
    assert [h.belief.id for h in hits] == ["f"]


def test_packaged_encoder_reproduces_the_model_and_recalls_by_meaning(encoder: Encoder) -> None:
    happy, dog, very, sunny = encoder.encode(
        ["That is a happy person", "That is a happy dog", "That is a very happy person",
         "Today is a sunny day"]
    )  # fmt: skip
    assert float(happy @ very) == pytest.approx(0.9429, abs=1e-3)  # the model card's figures
    assert float(happy @ dog) == pytest.approx(0.6946, abs=1e-3)
    assert float(happy @ sunny) == pytest.approx(0.2569, abs=1e-3)
    index = index_of(DEPLOY, filler=5)
    enable(index, encoder)
    hits = search(index, "u1", parse_query(ROLLBACK), lambda b: True)
    assert [h.belief.id for h in hits] == ["d"]
    assert hits[0].clauses[0].match == "semantic"


def suite_results(
    tmp_path: Path,
    encoder: Encoder | None,
    beliefs: list[Path],
    cases: list[dict[str, Any]],
    sessions: list[dict[str, Any]] = (),  # type: ignore[assignment]
    personas: dict[str, str] | None = None,
) -> list[CaseResult]:
    with open_store(tmp_path / f"suite-{encoder is not None}.duckdb") as store:
        for path in beliefs:
            store.import_beliefs(read_file(str(path)))
        if encoder is not None:
            enable(store.index, encoder)
        backend = StoreEvalBackend(store, personas)
        return run_cases(backend, cases) + run_sessions(backend, sessions)


SUITES = {
    "blind-spot": (["blindspots/beliefs.json"], "blindspots/cases.json"),
    "held-out A": (["blindspots/beliefs.json", "heldout/beliefs.json"], "heldout/cases.json"),
    "held-out B": (["heldout/beliefs.json"], "heldout/cases-2.json"),
}
# Meaning the model does not see: MiniLM puts the on-call belief below an unrelated one.
KNOWN_MISSES = {"meaning-paging", "ho-lee-notified", "ho-lee-after-outage", "ho-dana-containers",
                "ho-dana-passwords", "ho2-track-taps", "ho2-eyesight",
                "ho2-spanish", "ho2-eat", "ho2-mockups"}  # fmt: skip


@pytest.mark.parametrize("suite", list(SUITES))
def test_semantic_recall_loses_no_precision_case_and_finds_more(
    tmp_path: Path, encoder: Encoder, suite: str
) -> None:
    files, cases_file = SUITES[suite]
    cases = json.loads((HERE / cases_file).read_text())
    beliefs = [HERE / f for f in files]
    names_only = {r.case_id: r.passed for r in suite_results(tmp_path, None, beliefs, cases)}
    with_meaning = {r.case_id: r for r in suite_results(tmp_path, encoder, beliefs, cases)}
    failed = {cid for cid, r in with_meaning.items() if not r.passed}
    assert failed <= KNOWN_MISSES, {cid: with_meaning[cid].failures for cid in failed}
    assert all(with_meaning[cid].passed for cid, passed in names_only.items() if passed)


def test_semantic_recall_keeps_the_public_suite_72_of_72(
    tmp_path: Path, encoder: Encoder, conformance: Path
) -> None:
    paper = conformance / "tenure-v1.0.0-paper"
    personas = load_personas(json.loads((conformance / "persona.json").read_text()))
    results = suite_results(
        tmp_path,
        encoder,
        [paper / "beliefs.seed.json"],
        json.loads((paper / "retrieval.cases.json").read_text()),
        json.loads((paper / "session-retrieval.cases.json").read_text()),
        personas,
    )
    assert len(results) == 72
    assert [r.case_id for r in results if not r.passed] == []
