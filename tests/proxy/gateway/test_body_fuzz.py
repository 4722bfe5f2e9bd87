"""Odd request bodies on the three protocols: whatever shape a message, a content part or an
input item takes, the gateway answers a 400 naming the field or forwards it, never a 500."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.proxy.conftest import Gateway

# Any JSON value, small: the shapes a confused client or a hostile page may send.
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["", "x", "text", "user"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
PART_TYPES = ["text", "input_text", "output_text", "image_url", "tool_use", "tool_result"]
PART = (
    st.dictionaries(
        st.sampled_from(["type", "text", "content", "cache_control", "id", "name", "input"]),
        JSON | st.sampled_from(PART_TYPES) | st.just(["text"]),
        max_size=4,
    )
    | JSON
)
CONTENT = st.text(max_size=20) | st.lists(PART, max_size=3) | JSON
ROLE = st.sampled_from(["user", "assistant", "system", "developer", "tool", "function"])
MESSAGE = st.fixed_dictionaries(
    {"role": ROLE, "content": CONTENT},
    optional={
        "tool_calls": JSON,
        "tool_call_id": JSON,
        "name": JSON,
        "type": JSON | st.just("message"),
    },
)
MESSAGES = st.lists(MESSAGE | JSON, min_size=1, max_size=3)
# Tenure reads its identity keys from `metadata`: any shape of them.
METADATA = (
    st.dictionaries(
        st.sampled_from(
            ["tenure_user", "tenure_scope", "tenure_agent", "user_id", "agent_id", "x"]
        ),
        JSON | st.lists(st.sampled_from(["domain:code", "project:a", "", "!"]), max_size=2),
        max_size=3,
    )
    | JSON
)
CHAT = st.fixed_dictionaries(
    {"model": st.just("gpt-4o"), "messages": MESSAGES},
    optional={
        "stream": st.booleans(),
        "stream_options": JSON,
        "tools": JSON,
        "metadata": METADATA,
        "user": JSON,
    },
)
MESSAGES_API = st.fixed_dictionaries(
    {"model": st.just("claude-sonnet-4-5"), "max_tokens": st.just(16), "messages": MESSAGES},
    optional={"system": CONTENT, "stream": st.booleans(), "metadata": METADATA, "tools": JSON},
)
ITEM = st.fixed_dictionaries(
    {},
    optional={
        "type": JSON | st.sampled_from(["message", "function_call", "function_call_output"]),
        "role": ROLE | JSON,
        "content": CONTENT,
        "output": JSON,
        "call_id": JSON,
        "arguments": JSON,
    },
)
RESPONSES = st.fixed_dictionaries(
    {"model": st.just("gpt-4o"), "input": st.text(max_size=20) | st.lists(ITEM | JSON, max_size=3)},
    optional={
        "instructions": JSON,
        "stream": st.booleans(),
        "metadata": METADATA,
        "previous_response_id": JSON,
        "tools": JSON,
    },
)
CASES = {"/v1/chat/completions": CHAT, "/v1/messages": MESSAGES_API, "/v1/responses": RESPONSES}


@pytest.mark.parametrize("path", list(CASES))
def test_no_body_shape_is_a_server_error(
    gateway: Gateway, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    with httpx.Client(base_url=gateway.url, timeout=10) as client:

        @settings(
            max_examples=150,
            deadline=None,
            derandomize=True,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )
        @given(body=CASES[path])
        def check(body: dict[str, Any]) -> None:
            resp = client.post(
                path, content=json.dumps(body), headers={"content-type": "application/json"}
            )
            # A 5xx the stand-in provider answered is its business; the gateway's own is a bug.
            assert "internal error in the gateway" not in resp.text, body

        check()
    gateway.settle()
    # Nor does one break the work after the reply (the turn's capture, its extraction job).
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


@pytest.mark.parametrize("path", list(CASES))
def test_a_part_whose_type_is_a_list_is_forwarded(gateway: Gateway, path: str) -> None:
    part = {"type": ["text"], "text": "x"}
    body: dict[str, Any] = {"model": "gpt-4o", "max_tokens": 16}
    if path.endswith("responses"):
        body["input"] = [{"role": "user", "content": [part]}]
    else:
        body["messages"] = [{"role": "user", "content": [part]}]
    resp = httpx.post(gateway.url + path, json=body, timeout=10)
    assert resp.status_code == 200, resp.text
