"""Synthetic assistant replies (chat command answers) in OpenAI and Anthropic wire formats."""

from __future__ import annotations

import json
import time
from typing import Any


def _sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _event(name: str, payload: dict[str, Any]) -> bytes:
    return f"event: {name}\n".encode() + _sse(payload)


def openai_reply(text: str, *, model: str, request_id: str) -> bytes:
    """A complete `chat.completion` object."""
    return json.dumps(
        {
            "id": f"chatcmpl-{request_id}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }
    ).encode()


def openai_stream(text: str, *, model: str, request_id: str, include_usage: bool) -> list[bytes]:
    """`chat.completion.chunk` events ending with `[DONE]`."""
    base = {
        "id": f"chatcmpl-{request_id}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    usage: dict[str, Any] = {"usage": None} if include_usage else {}
    events = [
        _sse(
            {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": text},
                        "logprobs": None,
                        "finish_reason": None,
                    }
                ],
                **usage,
            }
        ),
        _sse(
            {
                **base,
                "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}],
                **usage,
            }
        ),
    ]
    if include_usage:
        zero = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        events.append(_sse({**base, "choices": [], "usage": zero}))
    events.append(b"data: [DONE]\n\n")
    return events


def anthropic_reply(text: str, *, model: str, request_id: str) -> bytes:
    """A complete Anthropic `message` object."""
    return json.dumps(_anthropic_message(text, model=model, request_id=request_id)).encode()


def anthropic_stream(text: str, *, model: str, request_id: str) -> list[bytes]:
    """Anthropic streaming events from `message_start` to `message_stop`."""
    start = _anthropic_message("", model=model, request_id=request_id)
    start.update(content=[], stop_reason=None)
    return [
        _event("message_start", {"type": "message_start", "message": start}),
        _event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        _event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": text},
            },
        ),
        _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 0},
            },
        ),
        _event("message_stop", {"type": "message_stop"}),
    ]


def _anthropic_message(text: str, *, model: str, request_id: str) -> dict[str, Any]:
    return {
        "id": f"msg_{request_id}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }
