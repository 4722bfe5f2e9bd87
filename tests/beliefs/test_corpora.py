"""The retrieval corpora ask only what the layers can answer.

A case that expects in the relevant layer a belief that layer never holds (a pinned one, which
the pinned layer carries into every prompt of its scope, or an open question, which search never
returns) fails whatever the matching does, and lowers every figure taken on its corpus.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.corpora import Corpus, corpora

CORPORA = corpora()


def _beliefs(corpus: Corpus) -> dict[str, dict[str, Any]]:
    return {
        str(b["_id"]): b
        for path in corpus.beliefs
        for b in json.loads(path.read_text())
        if isinstance(b, dict)
    }


@pytest.mark.parametrize("corpus", CORPORA, ids=[c.name for c in CORPORA])
def test_cases_expect_of_each_layer_what_it_can_hold(corpus: Corpus) -> None:
    beliefs = _beliefs(corpus)
    faults = []
    for spec in json.loads(corpus.cases.read_text()):
        expect = spec.get("expect") or {}
        relevant = (expect.get("relevantBeliefs") or {}).get("shouldOnlyInclude") or []
        for bid in relevant:
            belief = beliefs.get(bid)
            if belief is None:
                faults.append(f"{spec['caseId']}: {bid} is no belief of the corpus")
            elif belief.get("pinned") or belief.get("type") == "open_question":
                faults.append(f"{spec['caseId']}: {bid} is pinned or a question")
        named = [*relevant, *(expect.get("pinnedFacts") or {}).get("mustInclude", [])]
        owners = {beliefs[bid].get("user_id") for bid in named if bid in beliefs}
        if spec.get("userId") and owners - {spec["userId"]}:
            faults.append(f"{spec['caseId']}: names another user's belief")
    assert faults == []
