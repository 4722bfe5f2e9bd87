from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from extractor.schema import ExtractionOutput, response_format
from tests.extractor.fake_llm import extraction, new_belief


def test_invalid_items_are_skipped_with_reasons_and_the_rest_stands() -> None:
    raw = extraction(
        new_beliefs=[
            new_belief("a", "x", type="opinion"),
            new_belief("b", "y"),
            new_belief("c", "z", confidence=3),
        ],
        belief_updates=[{"change": "forgotten"}],
    )
    out = ExtractionOutput.model_validate(raw)
    assert [b.canonical_name for b in out.new_beliefs] == ["b"]
    assert out.belief_updates == []
    reasons = {s.item: s.reason for s in out.skipped}
    assert "new_beliefs[0] 'a'" in reasons and "type" in reasons["new_beliefs[0] 'a'"]
    assert "confidence" in reasons["new_beliefs[2] 'c'"]
    assert any(item.startswith("belief_updates[0]") for item in reasons)


@pytest.mark.parametrize("raw", [[], {"beliefs": []}, {"new_beliefs": "none"}])
def test_a_malformed_envelope_fails(raw: Any) -> None:
    with pytest.raises(ValidationError):
        ExtractionOutput.model_validate(raw)


def test_response_format_is_strict_json_schema_with_descriptions() -> None:
    fmt = response_format(ExtractionOutput, "extraction")
    assert fmt["type"] == "json_schema"
    schema = fmt["json_schema"]["schema"]
    assert fmt["json_schema"]["strict"] is True
    assert schema["required"] == [
        "new_beliefs",
        "belief_updates",
        "entity_updates",
        "resolved_open_questions",
    ]
    new = schema["$defs"]["NewBelief"]
    assert new["additionalProperties"] is False
    assert set(new["required"]) == set(new["properties"])
    assert "imperative" in new["properties"]["why_it_matters"]["description"]
    assert "default" not in str(schema)
