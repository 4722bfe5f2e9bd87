"""The exchange with the provider and what it leaves behind, shared by the chat and the
Responses endpoints.

`forward` sends the placed request upstream (or through LiteLLM for a routed model) and relays
the reply as it arrives. With the whole reply captured, the turn's extraction job is committed
before the client sees the reply's end (`before_end`), so a turn the client received in full
survives a kill; a reply cut short hands over what arrived once it stops (`finish`). `finish`
also counts the outcome and writes the injection record of a request that carried memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from starlette.types import Receive, Scope, Send

from proxy.gateway.forward import (
    Exchange,
    Header,
    UpstreamBroke,
    exchange,
    upstream_headers,
    with_query,
)
from proxy.gateway.identity import Identity
from proxy.gateway.injections import InjectionRecord
from proxy.gateway.memory import Memory
from proxy.gateway.translate import litellm_exchange
from proxy.gateway.turns import CapturedTurn, WireFormat, enqueue_turn, make_durable
from proxy.runtime import Runtime

ENDPOINTS: dict[WireFormat, str] = {  # the upstream path of each wire format, after the base
    "openai": "chat/completions",
    "anthropic": "messages",
    "responses": "responses",
}


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """Where the request came in: its wire format, the URL scope and the request id."""

    wire: WireFormat
    url_scope: str | None
    request_id: str
    url_user: str | None = None


@dataclass(slots=True)
class Handoff:
    """One exchange's turn and memory, on their way to the store."""

    rt: Runtime
    request: ChatRequest
    identity: Identity
    model: str
    memory: Memory | None
    user_message: str
    extract: bool
    capture: list[bytes] | None = field(init=False)
    handed_over: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.capture = [] if self.extract else None  # the relayed bytes, read back for the turn

    async def forward(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        body: dict[str, Any],
        payload: bytes,
        extra: list[Header],
    ) -> Exchange:
        """Send the placed request upstream, or through LiteLLM for a routed model (not for
        Anthropic's wire format, which goes to its own upstream), and relay the reply."""
        settings = self.rt.settings
        wire = self.request.wire
        anthropic = wire == "anthropic"
        route = None if anthropic else settings.models.get(body["model"])
        if route is not None:
            client_key = None if settings.api_key else client_key_of(scope)
            return await litellm_exchange(
                route,
                body,
                api_key=route.api_key or client_key,
                send=send,
                extra_headers=extra,
                capture=self.capture,
                responses=wire == "responses",
                before_end=self.before_end,
            )
        if anthropic:
            base = settings.anthropic_upstream_url or settings.upstream_url
            key = settings.anthropic_upstream_api_key or settings.upstream_api_key
        else:
            base, key = settings.upstream_url, settings.upstream_api_key
        forwarded = upstream_headers(
            scope["headers"],
            api_key=key,
            anthropic=anthropic,
            forward_credentials=not settings.api_key,
        )
        return await exchange(
            self.rt.upstream,
            "POST",
            with_query(f"{base}/{ENDPOINTS[wire]}", scope),
            headers=forwarded,
            body=payload,
            receive=receive,
            send=send,
            extra_headers=extra,
            capture=self.capture,
            before_end=self.before_end,
        )

    async def before_end(self, outcome: Exchange) -> None:
        """The whole reply is here: write the turn before the client sees its end."""
        if self.capture is not None and 200 <= outcome.status < 300:
            self.handed_over = True
            await make_durable(self.rt, self._captured(outcome))

    def finish(self, outcome: Exchange) -> None:
        """Count the outcome, record the injection, queue a turn not yet handed over.

        Raises:
            UpstreamBroke: the upstream failed mid-reply (after the bookkeeping).
        """
        rt = self.rt
        if outcome.disconnected:
            rt.counters.client_disconnects += 1
        if outcome.status >= 400:
            rt.counters.upstream_errors += 1
        answered = 200 <= outcome.status < 300  # a failed exchange leaves the store as it was
        if self.memory is not None and answered:
            rt.counters.injected_requests += 1
            rt.writer.submit_record(self._record(self.memory))
        if self.capture and answered and not self.handed_over:
            # A stream the client or the upstream cut short still hands over what arrived.
            enqueue_turn(rt.writer, self._captured(outcome), rt.seen)
        if outcome.broken:
            rt.counters.upstream_broken_streams += 1
            raise UpstreamBroke(outcome.broken)

    def _captured(self, outcome: Exchange) -> CapturedTurn:
        memory = self.memory
        return CapturedTurn(
            request_id=self.request.request_id,
            wire=self.request.wire,
            user_id=self.identity.user_id,
            agent_id=self.identity.agent_id,
            scopes=self.identity.all_scopes,
            model=self.model,
            user_message=self.user_message,
            chunks=self.capture or [],
            content_type=outcome.content_type,
            content_encoding=outcome.content_encoding,
            injected_ids=[i for ids in (memory.layers.values() if memory else ()) for i in ids],
            created_at=datetime.now(UTC),
        )

    def _record(self, memory: Memory) -> InjectionRecord:
        identity = self.identity
        return InjectionRecord(
            request_id=self.request.request_id,
            created_at=datetime.now(UTC),
            user_id=identity.user_id,
            agent_id=identity.agent_id,
            scopes=identity.all_scopes,
            model=self.model,
            endpoint=ENDPOINTS[self.request.wire],
            query=memory.query,
            layers=memory.layers,
            persona=memory.persona,
            approx_tokens=memory.approx_tokens,
        )


def client_key_of(scope: Scope) -> str | None:
    """The client's own key (Authorization: Bearer, or Anthropic's x-api-key)."""
    headers: dict[str, str] = {
        k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]
    }
    scheme, _, token = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return headers.get("x-api-key") or None
