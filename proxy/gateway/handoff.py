"""The exchange with the provider and what it leaves behind, shared by the chat and the
Responses endpoints.

`forward` sends the placed request upstream (or through LiteLLM for a routed model) and relays
the reply as it arrives; a request that is extracted captures the reply, and its turn is
made durable before the client sees the reply's end (`capture.py`). `finish` counts the
outcome, writes the injection record of a request that carried memory, and hands over a turn
cut short.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime

from starlette.types import Receive, Scope, Send

from proxy.gateway.capture import TurnCapture
from proxy.gateway.forward import (
    Exchange,
    Header,
    UpstreamBroke,
    exchange,
    upstream_headers,
    with_query,
)
from proxy.gateway.injections import InjectionRecord
from proxy.gateway.memory import Memory
from proxy.gateway.request import ChatRequest
from proxy.gateway.translate import litellm_exchange
from proxy.gateway.turns import WireFormat
from proxy.runtime import Runtime
from proxy.scopes import grant_of

log = logging.getLogger("tenure.proxy")

ENDPOINTS: dict[WireFormat, str] = {  # the upstream path of each wire format, after the base
    "openai": "chat/completions",
    "anthropic": "messages",
    "responses": "responses",
}


@dataclass(slots=True)
class Handoff:
    """One placed request's exchange, and its turn and memory on their way to the store."""

    rt: Runtime
    request: ChatRequest
    capture: TurnCapture | None = field(init=False)
    # The setting whose key went upstream in place of the client's, if one did.
    own_key: str | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.capture = TurnCapture(self.rt, self.request) if self.request.extract else None

    async def forward(self, receive: Receive, send: Send, extra: list[Header]) -> Exchange:
        """Send the placed request upstream, or through LiteLLM for a routed model (not for
        Anthropic's wire format, which goes to its own upstream), and relay the reply."""
        settings = self.rt.settings
        request = self.request
        scope, wire = request.scope, request.entry.wire
        anthropic = wire == "anthropic"
        before_end = self.capture.before_end if self.capture is not None else None
        route = None if anthropic else settings.models.get(request.model)
        if route is not None:
            # With access control on, the client's key is Tenure's, never the provider's.
            client_key = None if grant_of(scope) is not None else client_key_of(scope)
            return await litellm_exchange(
                route,
                request.body,
                api_key=route.api_key or client_key,
                send=send,
                extra_headers=extra,
                capture=self.capture is not None,
                responses=wire == "responses",
                before_end=before_end,
            )
        if anthropic:
            base = settings.anthropic_upstream_url or settings.upstream_url
            key = settings.anthropic_upstream_api_key or settings.upstream_api_key
        else:
            base, key = settings.upstream_url, settings.upstream_api_key
        if key:
            self.own_key = (
                "TENURE_ANTHROPIC_UPSTREAM_API_KEY"
                if anthropic and settings.anthropic_upstream_api_key
                else "TENURE_UPSTREAM_API_KEY"
            )
            # the client can tell whose key a refusal was about
            extra = [*extra, (b"x-tenure-upstream-key", self.own_key.encode())]
        forwarded = upstream_headers(
            scope["headers"],
            api_key=key,
            anthropic=anthropic,
            forward_credentials=grant_of(scope) is None,
        )
        return await exchange(
            self.rt.upstream,
            "POST",
            with_query(f"{base}/{ENDPOINTS[wire]}", scope),
            headers=forwarded,
            body=request.payload,
            receive=receive,
            send=send,
            extra_headers=extra,
            capture=self.capture is not None,
            before_end=before_end,
        )

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
        if outcome.status in (401, 403) and self.own_key is not None:
            log.warning(
                "the upstream refused the key in %s (%d); while it is set it replaces each "
                "client's own key: fix it, or unset it to forward the clients' keys",
                self.own_key,
                outcome.status,
            )
        answered = 200 <= outcome.status < 300  # a failed exchange leaves the store as it was
        memory = self.request.memory
        if memory is not None and answered:
            rt.counters.injected_requests += 1
            rt.writer.submit_record(self._record(memory))
        if self.capture is not None:
            self.capture.hand_over_rest(outcome)
        if outcome.broken:
            rt.counters.upstream_broken_streams += 1
            raise UpstreamBroke(outcome.broken)

    def _record(self, memory: Memory) -> InjectionRecord:
        request, identity = self.request, self.request.identity
        return InjectionRecord(
            request_id=request.entry.request_id,
            created_at=datetime.now(UTC),
            user_id=identity.user_id,
            agent_id=identity.agent_id,
            scopes=identity.all_scopes,
            model=request.model,
            endpoint=ENDPOINTS[request.entry.wire],
            query=memory.query,
            layers=memory.layers,
            persona=memory.persona,
            approx_tokens=memory.approx_tokens,
            persona_ref=memory.persona_ref,
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
