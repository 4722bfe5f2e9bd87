"""One chat request, read and parsed once: where it came in, its bytes and body, who asks and
with which scopes, and (once placed) the memory it carries and the bytes that go upstream.

The handler builds it with `read_request`, fills in the placement, and hands it on whole;
nothing below it takes the bytes and the body side by side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.types import Receive, Scope

from proxy.gateway.chat_commands import ChatState, ChatStates
from proxy.gateway.identity import Identity, header_text, resolve_identity
from proxy.gateway.memory import Memory
from proxy.gateway.protocols.base import WireProtocol
from proxy.gateway.request_body import dump_object, parse_object, read_body
from proxy.gateway.turn_loop import NO_TURN, TurnLoop
from proxy.scopes import ACCESS_USER, client_grant
from proxy.settings import Settings


@dataclass(frozen=True, slots=True)
class Entry:
    """Where the request came in: its protocol, the URL scope and user, the request id."""

    protocol: WireProtocol
    url_scope: str | None
    request_id: str
    url_user: str | None = None


@dataclass(slots=True)
class ChatRequest:
    """The request as the gateway holds it from reading to the upstream's last byte."""

    entry: Entry
    scope: Scope  # the ASGI scope: the client's headers and query string
    raw: bytes  # the bytes as received
    body: dict[str, Any]
    identity: Identity  # with the scopes the chat state adds
    state: ChatState
    payload: bytes  # what goes upstream: the bytes as received until the body changes
    memory: Memory | None = None
    user_message: str = ""  # what the user typed to start the turn, for the extraction job
    extract: bool = False
    turn: TurnLoop = NO_TURN  # the typed message this request answers, and its tool loop
    until_final: bool = False  # the turn's job waits for its final answer (history resent)

    @property
    def model(self) -> str:
        model: str = self.body["model"]
        return model

    @property
    def stream(self) -> bool:
        return self.body.get("stream") is True

    @property
    def injected(self) -> int:
        return self.memory.count if self.memory is not None else 0

    def memory_headers(self) -> list[tuple[bytes, bytes]]:
        """`X-Tenure-Injected`: the beliefs rendered; `X-Tenure-Persona`: the persona's version
        and how many beliefs it summarises, when one went in."""
        headers = [(b"x-tenure-injected", str(self.injected).encode())]
        ref = self.memory.persona_ref if self.memory is not None else None
        if ref is not None:
            headers.append((b"x-tenure-persona", f"{ref.version}; beliefs={ref.carries}".encode()))
        return headers

    def rewrite(self, body: dict[str, Any]) -> None:
        """The body changed (memory placed, Tenure's own fields taken out): send it encoded."""
        self.body = body
        self.payload = dump_object(body)


async def read_request(
    settings: Settings, chat_states: ChatStates, entry: Entry, scope: Scope, receive: Receive
) -> ChatRequest:
    """Read, parse and check the body as its protocol says, take out memory the client
    replayed, and resolve who is asking (with the chat state's scopes).

    Raises:
        ProxyError: 400/413 naming what is wrong with the body or the identity headers.
    """
    raw = await read_body(scope, receive, settings.max_body_bytes)
    body = parse_object(raw)
    entry.protocol.check(body)
    echoed = b"<tenure-memory" in raw  # the client replayed a prompt that carried memory
    if echoed:
        body = entry.protocol.without_echoed_memory(body)
    headers = {k.decode("latin-1"): header_text(v) for k, v in scope["headers"]}
    grant = client_grant(scope)
    # A client token names its user: the ids an application sends are not asked.
    identity = resolve_identity(
        headers,
        body,
        url_scope=entry.url_scope,
        url_user=entry.url_user,
        default_user=grant.user_id or "" if grant else settings.default_user,
        trust_client_ids=settings.trust_client_ids and grant is None,
        client_users=settings.client_users if grant is None else None,
    )
    if grant is not None:
        identity = grant.confine(identity)
    state = chat_states.get(identity.user_id, identity.agent_id)
    scope[ACCESS_USER] = None if identity.incognito else identity.user_id  # the access log's
    chat_scopes = state.scopes if grant is None else grant.usable(state.scopes)
    scoped = identity.scoped(chat_scopes, settings.default_scopes)
    if grant is not None:  # `!scope` and the defaults are held to the token's patterns too
        grant.check_scopes(scoped.scopes)
    return ChatRequest(
        entry=entry,
        scope=scope,
        raw=raw,
        body=body,
        identity=scoped,
        state=state,
        payload=dump_object(body) if echoed else raw,
    )
