"""One model call, whatever its protocol, read top-down.

Read and check the body and resolve who asks (`request.py`); answer a chat command; place the
turn's memory (a tool loop's request gets its typed message's again) where the protocol's
adapter says; decide whether the turn is extracted; forward it (or answer through LiteLLM for
a routed model) and relay the reply as it arrives; then count the outcome, record the
injection and hand the finished turn to the writer (`capture.py`). What differs between
protocols is asked of the adapter (`protocols/`); everything else happens here, once.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from functools import partial

from starlette.types import Receive, Scope, Send

from proxy.gateway.authorship import subagent_marker
from proxy.gateway.capture import TurnCapture, note_turn
from proxy.gateway.chat_commands import SAVE_SQL, ChatCommand, apply_command, parse_command
from proxy.gateway.forward import (
    Exchange,
    Header,
    UpstreamBroke,
    exchange,
    upstream_headers,
    with_query,
)
from proxy.gateway.harness import user_words
from proxy.gateway.injections import InjectionRecord
from proxy.gateway.loop_memory import turn_memory
from proxy.gateway.memory import Memory
from proxy.gateway.parts import Gateway
from proxy.gateway.placement import has_tenure_metadata, without_tenure_metadata
from proxy.gateway.protocols.base import Body
from proxy.gateway.replies import send_bytes, send_events
from proxy.gateway.request import ChatRequest, Entry, read_request
from proxy.gateway.side_calls import is_task_call
from proxy.gateway.translate import litellm_exchange
from proxy.gateway.turn_loop import TurnLoop
from proxy.scopes import ScopeCheck, client_grant, grant_of

log = logging.getLogger("tenure.proxy")


class ChatHandler:
    """The model-call paths (`chat/completions`, `messages`, `responses` …), for any adapter."""

    def __init__(self, gateway: Gateway) -> None:
        self.gw = gateway

    async def __call__(self, entry: Entry, scope: Scope, receive: Receive, send: Send) -> None:
        gw, protocol = self.gw, entry.protocol
        request = await read_request(gw.settings, gw.chat_states, entry, scope, receive)
        body = request.body  # as the client sent it: placement makes a new one
        typed = protocol.command_text(body)
        command = parse_command(typed) if typed is not None else None
        if command is not None:
            reply = self._run_command(request, command, client_grant(scope))
            extra = [(b"x-tenure-injected", b"0")]
            synthetic = protocol.synthetic(reply, body, request_id=entry.request_id)
            if isinstance(synthetic, bytes):
                await send_bytes(send, 200, synthetic, headers=extra)
            else:
                await send_events(send, synthetic, headers=extra)
            return
        turn = protocol.turn(body)
        await self._place_memory(request, turn)
        request.extract = self._extracts(request, body)
        request.turn, request.user_message = turn, turn.words
        request.until_final = protocol.until_final(body)
        note_turn(gw.writer, gw.seen, request, *protocol.earlier(body, turn))
        capture = None
        if request.extract:
            wait = gw.settings.durable_wait_s
            capture = TurnCapture(gw.writer, gw.seen, gw.counters, wait, request)
        key = turn.key(request.identity) if request.memory is not None else None
        if key is not None:
            if capture is None:  # nothing reads the reply: keep the memory as if a loop follows
                gw.loops.save(key)
            else:
                capture.keep_memory = partial(gw.loops.save, key)
        outcome, own_key = await self._forward(request, capture, receive, send)
        self._finish(request, capture, outcome, own_key)

    def _run_command(
        self, request: ChatRequest, command: ChatCommand, grant: ScopeCheck | None
    ) -> str:
        """Apply a chat command; the new state is kept in memory and written in the background.

        Raises:
            ProxyError: 403 for a `!scope` outside a client token's scope patterns.
        """
        gw, identity, state = self.gw, request.identity, request.state
        new_state, reply = apply_command(state, command)
        if grant is not None:  # a scope set before (by the operator) stays the operator's
            grant.check_scopes(set(new_state.scopes) - set(state.scopes), "!scope")
        if new_state != state:
            gw.chat_states.set(identity.user_id, identity.agent_id, new_state)
            row: list[object] = [identity.user_id, identity.agent_id or ""]
            row += [list(new_state.scopes), new_state.extract, new_state.inject]
            gw.writer.submit("chat_state", lambda store: store.execute(SAVE_SQL, row))
        gw.counters.chat_commands += 1
        return reply

    async def _place_memory(self, request: ChatRequest, turn: TurnLoop) -> None:
        """Find the turn's memory and place it; take Tenure's own `metadata` keys out."""
        identity, state, body = request.identity, request.state, request.body
        memory: Memory | None = None
        if not (identity.incognito or identity.no_inject or not state.inject):
            query = user_words(turn.words)  # the user's words, not the harness around them
            await self.gw.writer.ends_first()  # a search holds the loop: due reply ends first
            memory = await turn_memory(
                self.gw.memory, self.gw.loops, identity, turn, query, request.model
            )
            if memory is not None and memory.empty:
                memory = None
        if b'"tenure_' in request.raw and has_tenure_metadata(body):
            # Tenure's keys are for Tenure; a provider may refuse unknown ones.
            request.rewrite(without_tenure_metadata(body))
        if memory is not None:
            place = request.entry.protocol.place
            request.rewrite(place(request.body, memory.system_block, memory.user_block, at=turn.at))
            request.memory = memory

    def _extracts(self, request: ChatRequest, body: Body) -> bool:
        """Whether the turn goes to extraction: not incognito or switched off, and the user's
        own words (not an app's side call, not a subagent's prompt); `body` as it came."""
        identity, state = request.identity, request.state
        if identity.incognito or identity.no_extract or not state.extract:
            return False
        protocol = request.entry.protocol
        system = protocol.system_texts(body)
        if is_task_call(protocol.said(body), system):
            return False  # an app's title or tag call: not a turn, not a reinforcement
        # A subagent's prompt is the parent model's text, not the user's.
        return subagent_marker(request.scope["headers"], system) is None

    async def _forward(
        self, request: ChatRequest, capture: TurnCapture | None, receive: Receive, send: Send
    ) -> tuple[Exchange, str | None]:
        """Send the placed request upstream, or through LiteLLM for a routed model, and relay
        the reply; also the setting whose key went upstream in place of the client's."""
        settings, protocol, scope = self.gw.settings, request.entry.protocol, request.scope
        before_end = capture.before_end if capture is not None else None
        extra: list[Header] = request.memory_headers()
        translation = protocol.translation
        route = settings.models.get(request.model) if translation is not None else None
        if route is not None and translation is not None:
            # With access control on, the client's key is Tenure's, never the provider's.
            client_key = None if grant_of(scope) is not None else client_key_of(scope)
            outcome = await litellm_exchange(
                route,
                translation,
                request.body,
                api_key=route.api_key or client_key,
                send=send,
                extra_headers=extra,
                capture=capture is not None,
                before_end=before_end,
            )
            return outcome, None
        upstream = protocol.upstream(settings)
        own_key = upstream.key_setting if upstream.key else None
        if own_key is not None:  # the client can tell whose key a refusal was about
            extra = [*extra, (b"x-tenure-upstream-key", own_key.encode())]
        forwarded = upstream_headers(
            scope["headers"],
            api_key=upstream.key,
            bearer=upstream.bearer,
            forward_credentials=grant_of(scope) is None,
        )
        outcome = await exchange(
            self.gw.upstream,
            "POST",
            with_query(f"{upstream.base}/{protocol.endpoint}", scope),
            headers=forwarded,
            body=request.payload,
            receive=receive,
            send=send,
            extra_headers=extra,
            capture=capture is not None,
            before_end=before_end,
        )
        return outcome, own_key

    def _finish(
        self,
        request: ChatRequest,
        capture: TurnCapture | None,
        outcome: Exchange,
        own_key: str | None,
    ) -> None:
        """Count the outcome, record the injection, hand over a turn not yet handed over.

        Raises:
            UpstreamBroke: the upstream failed mid-reply (after the bookkeeping).
        """
        counters = self.gw.counters
        if outcome.disconnected:
            counters.client_disconnects += 1
        if outcome.status >= 400:
            counters.upstream_errors += 1
        if outcome.status in (401, 403) and own_key is not None:
            log.warning(
                "the upstream refused the key in %s (%d); while it is set it replaces each "
                "client's own key: fix it, or unset it to forward the clients' keys",
                own_key,
                outcome.status,
            )
        answered = 200 <= outcome.status < 300  # a failed exchange leaves the store as it was
        if request.memory is not None and answered:
            counters.injected_requests += 1
            self.gw.writer.submit_record(injection_record(request, request.memory))
        if capture is not None:
            capture.hand_over_rest(outcome)
        if outcome.broken:
            counters.upstream_broken_streams += 1
            raise UpstreamBroke(outcome.broken)


def injection_record(request: ChatRequest, memory: Memory) -> InjectionRecord:
    identity = request.identity
    return InjectionRecord(
        request_id=request.entry.request_id,
        created_at=datetime.now(UTC),
        user_id=identity.user_id,
        agent_id=identity.agent_id,
        scopes=identity.all_scopes,
        model=request.model,
        endpoint=request.entry.protocol.endpoint,
        query=memory.query,
        layers=memory.layers,
        persona=memory.persona,
        approx_tokens=memory.approx_tokens,
        persona_ref=memory.persona_ref,
    )


def client_key_of(scope: Scope) -> str | None:
    """The client's own key (Authorization: Bearer, or x-api-key)."""
    headers: dict[str, str] = {
        k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]
    }
    scheme, _, token = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return headers.get("x-api-key") or None
