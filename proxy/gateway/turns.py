"""The finished turn of one exchange, as it goes to the extraction job queue.

`CapturedTurn` holds the relayed reply's bytes with the request's identity and memory;
`to_turn` runs on the store thread, or on the loop while a reply's end waits for its job to be
journaled (that reply waits for the job's row either way): the reply is read back by its
protocol's adapter (JSON or SSE, a stream cut short included: what arrived is used, a torn
last event ignored), and everything the proxy injected and the agent harness wrapped around
the user's words is stripped. One typed message makes one job: a reply that calls tools is not
the turn's end when the client sends the history again, and the job written with the final
answer holds the typed words, that answer and the loop's tool calls by name. A request with no
new user words makes none, and a user message already handed to extraction (a retry, a
replayed history) goes once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from beliefs.context.render import strip_injected
from extractor.turn import PersonaRef, Turn
from proxy.gateway.assistant_turn import AssistantTurn, decode, sse_data
from proxy.gateway.harness import strip_harness
from proxy.gateway.protocols.base import WireProtocol
from proxy.gateway.side_calls import SeenMessages


def read_reply(
    protocol: WireProtocol,
    chunks: list[bytes],
    *,
    content_type: str,
    content_encoding: str = "",
) -> AssistantTurn:
    """The assistant's visible text and tool calls from a captured response body.

    Tool calls come out in the OpenAI shape `{"id", "type": "function", "function": {"name",
    "arguments"}}` whatever the protocol."""
    raw = decode(b"".join(chunks), content_encoding)
    if "text/event-stream" in content_type:
        return protocol.read_events(sse_data(raw))
    try:
        payload = json.loads(raw)
    except ValueError:
        return AssistantTurn()
    if not isinstance(payload, dict):
        return AssistantTurn()
    return protocol.read_object(payload)


@dataclass(frozen=True, slots=True)
class CapturedTurn:
    """Everything about a finished exchange that the extraction job needs."""

    request_id: str
    protocol: WireProtocol
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
    reply: AssistantTurn | None = None  # the reply already read from `chunks` (`read`)

    def read(self) -> AssistantTurn:
        """The reply's text and tool calls, read from the captured bytes."""
        if self.reply is not None:
            return self.reply
        return read_reply(
            self.protocol,
            self.chunks,
            content_type=self.content_type,
            content_encoding=self.content_encoding,
        )

    def to_turn(self, seen: SeenMessages | None = None) -> Turn | None:
        """The extraction turn with injected memory and harness text stripped; None when the
        user said nothing new (a tool loop's request, a subagent's, a message already
        extracted) or the turn goes on. `seen`: user messages already extracted (they go
        once)."""
        reply = self.read()
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
            wire=self.protocol.turn_wire,
        )


def named_calls(names: tuple[str, ...]) -> list[dict[str, Any]]:
    """A loop's earlier tool calls, by name only (their arguments and results are the tools'
    business, not what the user said)."""
    return [{"type": "function", "function": {"name": name}} for name in names]
