"""Reading the finished assistant turn back out of the bytes relayed to the client.

Works on the captured body after the last byte (never on the hot path): OpenAI chat
completions, the Responses API and Anthropic, JSON and SSE, including a stream cut short (what
arrived is used; a torn last event is ignored).
Tool calls come out in the OpenAI shape `{"id", "type": "function", "function": {"name",
"arguments"}}` for both formats (Anthropic `tool_use` input is serialised to JSON). The
finished turn, with everything the proxy injected and the agent harness wrapped around the
user's words stripped, becomes an extraction job written through the background writer, so the
response is never delayed. One typed message makes one job: a reply that calls tools is not
the turn's end when the client sends the history again, and the job written with the final
answer holds the typed words, that answer and the loop's tool calls by name. A request with no
new user words makes none, and a user message already handed to extraction (a retry, a
replayed history) goes once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from beliefs.context.render import strip_injected
from extractor.turn import PersonaRef, Turn
from proxy.gateway.background import StoreWriter
from proxy.gateway.harness import strip_harness
from proxy.gateway.responses_stream import output_turn, stream_turn
from proxy.gateway.side_calls import SeenMessages

if TYPE_CHECKING:
    from proxy.runtime import Runtime

log = logging.getLogger("tenure.proxy")

WireFormat = Literal["openai", "anthropic", "responses"]


@dataclass(slots=True)
class AssistantTurn:
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.text and not self.tool_calls


def read_turn(
    wire: WireFormat, chunks: list[bytes], *, content_type: str, content_encoding: str = ""
) -> AssistantTurn:
    """The assistant's visible text and tool calls from a captured response body."""
    raw = _decode(b"".join(chunks), content_encoding)
    if "text/event-stream" in content_type:
        events = _sse_data(raw)
        if wire == "responses":
            return AssistantTurn(*stream_turn(events))
        return _openai_stream(events) if wire == "openai" else _anthropic_stream(events)
    try:
        payload = json.loads(raw)
    except ValueError:
        return AssistantTurn()
    if not isinstance(payload, dict):
        return AssistantTurn()
    if wire == "responses":
        return AssistantTurn(*output_turn(payload.get("output")))
    return _openai_json(payload) if wire == "openai" else _anthropic_json(payload)


def _decode(raw: bytes, encoding: str) -> bytes:
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


def _sse_data(raw: bytes) -> list[dict[str, Any]]:
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


def _first_choice(payload: dict[str, Any]) -> dict[str, Any]:
    choices = payload.get("choices")
    if isinstance(choices, list):
        for choice in choices:
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                return choice
    return {}


def _openai_json(payload: dict[str, Any]) -> AssistantTurn:
    message = _first_choice(payload).get("message") or {}
    content = message.get("content")
    calls = message.get("tool_calls")
    return AssistantTurn(
        text=content if isinstance(content, str) else "",
        tool_calls=[c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else [],
    )


def _openai_stream(events: list[dict[str, Any]]) -> AssistantTurn:
    parts: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for payload in events:
        delta = _first_choice(payload).get("delta") or {}
        if isinstance(delta.get("content"), str):
            parts.append(delta["content"])
        for call in delta.get("tool_calls") or []:
            if not isinstance(call, dict):
                continue
            slot = calls.setdefault(
                int(call.get("index", 0)),
                {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
            )
            if call.get("id"):
                slot["id"] = call["id"]
            if call.get("type"):
                slot["type"] = call["type"]
            function = call.get("function") or {}
            slot["function"]["name"] += function.get("name") or ""
            slot["function"]["arguments"] += function.get("arguments") or ""
    return AssistantTurn("".join(parts), [calls[i] for i in sorted(calls)])


def _tool_use(block: dict[str, Any], arguments: str) -> dict[str, Any]:
    return {
        "id": block.get("id", ""),
        "type": "function",
        "function": {"name": block.get("name", ""), "arguments": arguments},
    }


def _anthropic_json(payload: dict[str, Any]) -> AssistantTurn:
    turn = AssistantTurn()
    texts: list[str] = []
    for block in payload.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "tool_use":
            turn.tool_calls.append(_tool_use(block, json.dumps(block.get("input", {}))))
    turn.text = "".join(texts)
    return turn


def _anthropic_stream(events: list[dict[str, Any]]) -> AssistantTurn:
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, list[str]] = {}
    texts: dict[int, list[str]] = {}
    for payload in events:
        kind = payload.get("type")
        index = int(payload.get("index", 0)) if "index" in payload else 0
        if kind == "content_block_start" and isinstance(payload.get("content_block"), dict):
            block = payload["content_block"]
            blocks[index] = block
            if block.get("type") == "text":
                texts[index] = [block.get("text") or ""]
        elif kind == "content_block_delta" and isinstance(payload.get("delta"), dict):
            delta = payload["delta"]
            if delta.get("type") == "text_delta":
                texts.setdefault(index, []).append(delta.get("text") or "")
            elif delta.get("type") == "input_json_delta":
                partial.setdefault(index, []).append(delta.get("partial_json") or "")
    turn = AssistantTurn(text="".join("".join(texts[i]) for i in sorted(texts)))
    for index in sorted(blocks):
        block = blocks[index]
        if block.get("type") == "tool_use":
            arguments = "".join(partial.get(index, [])) or json.dumps(block.get("input") or {})
            turn.tool_calls.append(_tool_use(block, arguments))
    return turn


@dataclass(frozen=True, slots=True)
class CapturedTurn:
    """Everything about a finished exchange that the extraction job needs."""

    request_id: str
    wire: WireFormat
    user_id: str
    agent_id: str | None
    scopes: tuple[str, ...]
    model: str
    user_message: str
    chunks: list[bytes]
    content_type: str
    content_encoding: str
    injected_ids: list[str]
    created_at: datetime
    tools: tuple[str, ...] = ()  # the tools the turn's loop called before this request
    until_final: bool = False  # a reply that calls tools is not the turn's end: no job yet
    turn_key: str | None = None  # the typed message and its place in the conversation
    persona: PersonaRef | None = None  # the persona it received, as a reference

    def to_turn(self, seen: SeenMessages | None = None) -> Turn | None:
        """The extraction turn with injected memory and harness text stripped; None when the
        user said nothing new (a tool loop's request, a subagent's, a message already
        extracted) or the turn goes on. `seen`: user messages already extracted (they go
        once)."""
        reply = read_turn(
            self.wire,
            self.chunks,
            content_type=self.content_type,
            content_encoding=self.content_encoding,
        )
        if self.until_final and reply.tool_calls:
            return None  # the loop goes on: its final answer makes the turn's one job
        user_message = strip_harness(strip_injected(self.user_message))
        if not user_message.strip():
            return None
        # Once per typed message: "yes" typed again later is new, the same message resent is not.
        once = self.turn_key or user_message
        if seen is not None and not seen.first_time(self.user_id, self.agent_id, once):
            return None
        return Turn(
            request_id=self.request_id,
            user_id=self.user_id,
            agent_id=self.agent_id,
            scopes=list(self.scopes),
            model=self.model,
            user_message=user_message,
            assistant_message=strip_injected(reply.text),
            tool_calls=named_calls(self.tools) + reply.tool_calls,
            injected_ids=self.injected_ids,
            persona=self.persona,
            created_at=self.created_at,
            wire="anthropic" if self.wire == "anthropic" else "openai",
        )


def named_calls(names: tuple[str, ...]) -> list[dict[str, Any]]:
    """A loop's earlier tool calls, by name only (their arguments and results are the tools'
    business, not what the user said)."""
    return [{"type": "function", "function": {"name": name}} for name in names]


def enqueue_turn(
    writer: StoreWriter, captured: CapturedTurn, seen: SeenMessages | None = None
) -> None:
    """Queue the job write; the body is parsed on the store thread, off the request path, and
    the writer puts a batch's jobs in one statement."""
    writer.submit_job(lambda: captured.to_turn(seen))


async def make_durable(rt: Runtime, captured: CapturedTurn) -> bool:
    """Commit the turn's extraction job now and wait for it: call with the whole reply
    captured, before relaying its last event or bytes, so a turn the client received in full
    survives a kill. False when the store did not take it within `durable_wait_s` or refused
    it: the job then stays with the writer, which keeps trying (see /healthz). With
    `durable_wait_s` 0 the job is only queued (batched, not waited for)."""
    if rt.settings.durable_wait_s <= 0:
        enqueue_turn(rt.writer, captured, rt.seen)
        return False
    try:
        async with asyncio.timeout(rt.settings.durable_wait_s):
            if await rt.writer.commit_job(lambda: captured.to_turn(rt.seen)):
                return True
    except TimeoutError:
        pass
    rt.counters.turns_not_durable += 1
    log.warning(
        "turn %s is not on disk yet as its reply ends (the store is slow or refusing writes); "
        "it is kept and written when the store takes it",
        captured.request_id,
    )
    return False
