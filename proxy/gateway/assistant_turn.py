"""The assistant's visible text and tool calls, and the protocol-neutral part of reading them
back out of a relayed reply: undoing the content encoding and splitting an SSE body into its
JSON events. Each protocol adapter reads its own events and objects from there."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class AssistantTurn:
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.text and not self.tool_calls


def function_call(call_id: Any, name: Any, arguments: str) -> dict[str, Any]:
    """A tool call in the OpenAI tool-call shape the extractor reads, whatever the protocol."""
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def decode(raw: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    try:
        if encoding == "gzip":
            return zlib.decompress(raw, 16 + zlib.MAX_WBITS)
        if encoding == "deflate":
            return zlib.decompress(raw)
    except zlib.error:
        # A cut-short compressed body: keep what decodes.
        return zlib.decompressobj(16 + zlib.MAX_WBITS if encoding == "gzip" else 0).decompress(raw)
    return raw


def sse_data(raw: bytes) -> list[dict[str, Any]]:
    """The JSON payloads of complete `data:` events; `[DONE]` and torn events skipped."""
    text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n")
    datas = []
    for event in text.split("\n\n"):
        if event.startswith("data:") and "\n" not in event:  # the usual one-line event
            data = event[5:].lstrip(" ")
        else:
            data = "\n".join(
                line[5:].lstrip(" ") for line in event.split("\n") if line.startswith("data:")
            )
        if data and data != "[DONE]":
            datas.append(data)
    # One parse of all events as one array costs a fraction of one parse per event (a reply
    # streams an event per token); any event that is not one JSON value fails it, and then
    # each is parsed on its own so only the torn ones are skipped.
    try:
        payloads = json.loads(f"[{','.join(datas)}]")
    except ValueError:
        payloads = None
    if not isinstance(payloads, list) or len(payloads) != len(datas):
        payloads = []
        for data in datas:
            try:
                payloads.append(json.loads(data))
            except ValueError:
                continue
    return [payload for payload in payloads if isinstance(payload, dict)]


def sse(payload: dict[str, Any]) -> bytes:
    """One unnamed SSE event."""
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def named_sse(name: str, payload: dict[str, Any]) -> bytes:
    """One SSE event with an `event:` line naming it."""
    return f"event: {name}\n".encode() + sse(payload)
