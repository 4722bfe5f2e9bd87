from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from extractor.errors import ExtractionOutputInvalid
from extractor.llm import LiteLLMChatModel
from extractor.schema import ExtractionOutput
from extractor.structured import complete_structured
from tests.extractor.fake_llm import FakeChatModel, extraction, new_belief

MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_a_valid_reply_is_returned_after_one_call() -> None:
    llm = FakeChatModel([extraction(new_beliefs=[new_belief("a", "b")])])
    result = run(complete_structured(llm, MESSAGES, ExtractionOutput, model="m"))
    assert result.value.new_beliefs[0].canonical_name == "a"
    assert len(llm.calls) == 1
    assert llm.calls[0]["response_format"]["json_schema"]["name"] == "extraction"


def test_fenced_json_is_repaired_without_a_re_ask() -> None:
    body = json.dumps(extraction())
    llm = FakeChatModel([f"Here you go:\n```json\n{body}\n```\nanything else?"])
    result = run(complete_structured(llm, MESSAGES, ExtractionOutput, model="m"))
    assert result.value.new_beliefs == []
    assert len(llm.calls) == 1


def test_invalid_reply_is_re_asked_once_with_the_error_and_caller_messages_untouched() -> None:
    messages = [dict(m) for m in MESSAGES]
    llm = FakeChatModel([{"beliefs": []}, extraction()])
    run(complete_structured(llm, messages, ExtractionOutput, model="m"))
    assert messages == MESSAGES
    second = llm.calls[1]["messages"]
    assert second[:2] == MESSAGES
    # The re-ask names the error and the part at fault; the bad reply is not sent back whole.
    assert [m["role"] for m in second] == ["system", "user", "user"]
    assert "beliefs" in second[2]["content"] and "could not be used" in second[2]["content"]


def test_two_invalid_replies_raise_with_the_raw_output() -> None:
    llm = FakeChatModel(["I cannot do that", "still no JSON"])
    with pytest.raises(ExtractionOutputInvalid) as info:
        run(complete_structured(llm, MESSAGES, ExtractionOutput, model="m"))
    assert "I cannot do that" in info.value.raw_output
    assert "still no JSON" in info.value.raw_output
    assert "no JSON object" in info.value.message


class _Provider(BaseHTTPRequestHandler):
    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.received.append({"path": self.path, "auth": self.headers["Authorization"], **body})
        reply = {
            "id": "c1",
            "object": "chat.completion",
            "created": 1,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": json.dumps(extraction())},
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def provider() -> Iterator[str]:
    _Provider.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Provider)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_litellm_model_speaks_openai_with_the_json_schema(provider: str) -> None:
    llm = LiteLLMChatModel(api_base=provider, api_key="sk-test-key", timeout=10)

    async def call() -> Any:
        try:
            return await complete_structured(
                llm, MESSAGES, ExtractionOutput, model="openai/small-model"
            )
        finally:
            await llm.aclose()

    result = run(call())
    assert result.value.new_beliefs == []
    [request] = _Provider.received
    assert request["path"] == "/v1/chat/completions"
    assert request["model"] == "small-model"
    assert request["auth"] == "Bearer sk-test-key"
    assert request["messages"] == MESSAGES
    assert request["response_format"]["type"] == "json_schema"
    schema = request["response_format"]["json_schema"]["schema"]
    assert "new_beliefs" in schema["properties"]


def test_a_parameter_the_model_does_not_take_is_left_out_not_a_failure(provider: str) -> None:
    # Reasoning models take only temperature 1; extraction asks for 0. LiteLLM refused the
    # whole call, so every job of a user on such a model failed.
    llm = LiteLLMChatModel(api_base=provider, api_key="sk-test-key", timeout=10)

    async def call() -> Any:
        try:
            return await complete_structured(
                llm, MESSAGES, ExtractionOutput, model="openai/gpt-5-mini"
            )
        finally:
            await llm.aclose()

    result = run(call())
    assert result.value.new_beliefs == []
    [request] = _Provider.received
    assert request["model"] == "gpt-5-mini"
