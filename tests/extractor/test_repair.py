"""Reading replies: valid JSON is never harmed; the re-ask carries the error and the part only."""

from __future__ import annotations

import asyncio
import json

import pytest

from extractor.errors import ExtractionTruncated, OutputModeUnavailable
from extractor.llm import ModelReply
from extractor.repair import parse_object
from extractor.schema import ExtractionOutput
from extractor.structured import CallOptions, complete_structured
from tests.extractor.fake_llm import FakeChatModel, extraction, new_belief

MESSAGES = [{"role": "system", "content": "rules " * 100}, {"role": "user", "content": "turn"}]
SQL = "Keeps queries like this:\n```sql\nSELECT 1;\n```\nin the repo."


def test_valid_json_whose_content_holds_a_fence_is_taken_whole() -> None:
    body = json.dumps(extraction(new_beliefs=[new_belief("sql_style", SQL)]))
    data, problem = parse_object(body)
    assert problem is None and data is not None
    assert data["new_beliefs"][0]["content"] == SQL


@pytest.mark.parametrize(
    "wrap",
    [
        "```json\n{}\n```",
        "Here is the JSON:\n```json\n{}\n```\nAnything else?",
        "Sure! {} Hope that helps.",
    ],
)
def test_fences_and_prose_around_the_object_are_left_aside(wrap: str) -> None:
    body = json.dumps(extraction(new_beliefs=[new_belief("sql_style", SQL)]))
    data, problem = parse_object(wrap.replace("{}", body))
    assert problem is None and data is not None
    assert data["new_beliefs"][0]["content"] == SQL


def test_raw_new_lines_inside_strings_are_accepted() -> None:
    data, problem = parse_object('{"content": "line one\nline two\ttab"}')
    assert problem is None and data == {"content": "line one\nline two\ttab"}


def test_a_json_error_names_its_place_once() -> None:
    _, problem = parse_object('{"content": "never closed')
    assert problem is not None
    assert "at at" not in problem.message
    assert "Unterminated string starting at line 1 column 13" in problem.message


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


def test_the_re_ask_names_the_error_and_only_the_invalid_part() -> None:
    filler = [new_belief(f"fact_{n}", "x" * 300) for n in range(6)]
    bad = json.dumps({**extraction(new_beliefs=filler), "belief_updates": "none"})
    llm = FakeChatModel([bad, extraction()])
    run(complete_structured(llm, MESSAGES, ExtractionOutput, model="m"))
    re_ask = llm.calls[1]["messages"]
    assert re_ask[:2] == MESSAGES and len(re_ask) == 3
    correction = re_ask[2]["content"]
    assert "belief_updates" in correction and '"none"' in correction
    assert len(correction) < 600 < len(bad)  # the bad reply is not sent back whole


def test_every_call_sends_a_token_budget_and_temperature_zero() -> None:
    llm = FakeChatModel([extraction()])
    run(complete_structured(llm, MESSAGES, ExtractionOutput, model="m"))
    assert llm.calls[0]["max_tokens"] == 1024 and llm.calls[0]["temperature"] == 0


def test_a_cut_off_reply_is_its_own_error_not_a_re_ask() -> None:
    cut = ModelReply(text='{"new_beliefs": [{"type": "deci', finish_reason="length")
    llm = FakeChatModel([cut, cut])
    with pytest.raises(ExtractionTruncated) as info:
        run(
            complete_structured(
                llm, MESSAGES, ExtractionOutput, model="m", options=CallOptions(max_tokens=100)
            )
        )
    assert [c["max_tokens"] for c in llm.calls] == [100, 4096]
    assert all(len(c["messages"]) == 2 for c in llm.calls)  # no re-ask of a cut reply
    assert info.value.raw_output.count('{"new_beliefs"') == 2


def test_modes_refused_earlier_are_skipped_and_none_left_is_a_named_error() -> None:
    llm = FakeChatModel([extraction()])
    for mode in ("json_schema", "json_object", "tools"):
        llm.modes.refuse("m", mode, f"no {mode} here")
    run(complete_structured(llm, MESSAGES, ExtractionOutput, model="m"))
    call = llm.calls[0]
    assert call["response_format"] is None and call["tools"] is None
    assert "new_beliefs: list of objects" in call["messages"][0]["content"]  # the outline
    llm.modes.refuse("m", "text", "no text either")
    with pytest.raises(OutputModeUnavailable, match="no json_schema here"):
        run(complete_structured(llm, MESSAGES, ExtractionOutput, model="m"))
