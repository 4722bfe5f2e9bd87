from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from extractor.schema import ExtractionOutput, response_format, wire_schema
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


def _nodes(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return [node, *(n for value in node.values() for n in _nodes(value))]
    if isinstance(node, list):
        return [n for value in node for n in _nodes(value)]
    return []


def test_the_wire_schema_is_bounded_for_grammar_decoders() -> None:
    schema = wire_schema(ExtractionOutput)
    nodes = _nodes(schema)
    strings = [n for n in nodes if n.get("type") == "string"]
    assert strings and all(0 < n["maxLength"] <= 1000 for n in strings)
    arrays = [n for n in nodes if n.get("type") == "array"]
    assert arrays and all("maxItems" in n for n in arrays)
    new = schema["$defs"]["NewBelief"]["properties"]
    assert new["canonical_name"]["minLength"] == 1
    assert new["aliases"]["items"]["minLength"] == 1
    # Pydantic still holds the full rule: 1500 characters of content are valid.
    out = ExtractionOutput.model_validate(extraction(new_beliefs=[new_belief("a", "x" * 1500)]))
    assert len(out.new_beliefs[0].content) == 1500


def test_the_light_schema_leaves_out_the_rarely_used_fields() -> None:
    light = wire_schema(ExtractionOutput, variant="light")
    assert "entity_updates" not in light["properties"] and "EntityUpdate" not in light["$defs"]
    new = light["$defs"]["NewBelief"]
    assert "memory_class" not in new["properties"] and "participants" not in new["properties"]
    assert set(new["required"]) == set(new["properties"])
    assert len(json.dumps(light)) < len(json.dumps(wire_schema(ExtractionOutput)))
    bare = wire_schema(ExtractionOutput, bounded=False)
    assert "maxLength" not in json.dumps(bare) and "maxItems" not in json.dumps(bare)
