"""The proxy paths: `/v1/...`, the same without `/v1`, `/scope/<scope>/v1/...`, and any of these
after `/user/<id>/` (a user for clients that only let you set a base URL)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol
from urllib.parse import unquote

from starlette.routing import BaseRoute, Match, Mount, Route
from starlette.types import Receive, Scope, Send

from proxy.errors import ProxyError
from proxy.gateway.handler import ChatHandler
from proxy.gateway.parts import Gateway
from proxy.gateway.passthrough import handle_passthrough
from proxy.gateway.protocols.anthropic_messages import ANTHROPIC_MESSAGES
from proxy.gateway.protocols.base import WireProtocol
from proxy.gateway.protocols.chat_completions import CHAT_COMPLETIONS
from proxy.gateway.protocols.responses import RESPONSES
from proxy.gateway.request import Entry
from proxy.scopes import REQUEST_ID

# The route table: the calls whose bodies the gateway reads and answers with memory, by their
# path after `/v1/`, each with its protocol's adapter. A new protocol is one line here.
PROTOCOLS: dict[str, WireProtocol] = {
    "chat/completions": CHAT_COMPLETIONS,
    "messages": ANTHROPIC_MESSAGES,
    "responses": RESPONSES,
}


def split_user(path: str) -> tuple[str | None, str]:
    """(URL user or None, the rest of the path) of a `/user/<id>/...` path."""
    rest = path.lstrip("/")
    if not rest.startswith("user/"):
        return None, path
    user, _, rest = rest[len("user/") :].partition("/")
    return unquote(user) or None, "/" + rest


def split_path(path: str) -> tuple[str | None, str]:
    """(URL scope or None, upstream path without `/v1/`) of a proxy path (no user prefix)."""
    url_scope: str | None = None
    rest = path.lstrip("/")
    if rest.startswith("scope/"):
        # The scope runs to the `/v1` that follows it: a sub-domain scope (domain:code/sql)
        # holds a slash, written as is or escaped.
        after = rest[len("scope/") :]
        cut = after.find("/v1/")
        if cut < 0 and after.endswith("/v1"):
            cut = len(after) - len("/v1")
        if cut >= 0:
            url_scope, rest = after[:cut], after[cut + 1 :]
        else:
            url_scope, _, rest = after.partition("/")
    if rest == "v1" or rest.startswith("v1/"):
        rest = rest[3:]
    return url_scope or None, rest.strip("/")


def _check_segments(rest: str) -> None:
    """Refuse `.` and `..` segments: an upstream that resolves them would serve a path
    outside its configured base URL, with the gateway's upstream key."""
    if any(segment in (".", "..") for segment in rest.split("/")):
        raise ProxyError(
            400,
            f"the path /{rest} has a '.' or '..' segment; the gateway forwards only paths "
            "below the upstream base URL — send the path without them",
            code="invalid_path",
        )


def first_segments(routes: Iterable[BaseRoute]) -> frozenset[str]:
    """The first path segments Tenure's own routes live under (`api`, `beliefs` …)."""
    return frozenset(
        route.path.lstrip("/").split("/")[0]
        for route in routes
        if isinstance(route, Route | Mount) and route.path.strip("/")
    )


class ProxyRoute(Route):
    """The catch-all to the proxy, for every path outside the `reserved` first segments."""

    def __init__(self, endpoint: ProxyEndpoint, *, reserved: frozenset[str]) -> None:
        super().__init__("/{path:path}", endpoint, methods=None)
        self.reserved = reserved

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] == "http" and scope["path"].lstrip("/").split("/")[0] in self.reserved:
            return Match.NONE, {}
        return super().matches(scope)


class BrowserCheck(Protocol):
    """Raises a ProxyError for a request a browser sent for another site."""

    def __call__(self, headers: Any, *, model_call: bool) -> None: ...


class ProxyEndpoint:
    """A plain ASGI app (no per-request Request object) for the hot path; the app's lifespan
    attaches the gateway's collaborators before the first request. `guard` refuses a call a
    browser made for another site (given by the app: the security package's check)."""

    def __init__(self, guard: BrowserCheck) -> None:
        self.guard = guard
        self.gateway: Gateway | None = None
        self.handler: ChatHandler | None = None

    def attach(self, gateway: Gateway) -> None:
        self.gateway, self.handler = gateway, ChatHandler(gateway)

    def detach(self) -> None:
        self.gateway = self.handler = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        gateway, handler = self.gateway, self.handler
        if gateway is None or handler is None:
            raise ProxyError(503, "the gateway is not running (starting or stopping); retry")
        counters = gateway.counters
        counters.requests += 1
        counters.in_flight += 1  # extraction yields to live requests (see ExtractionWorkers)
        try:
            url_user, path = split_user(scope["path"])
            url_scope, rest = split_path(path)
            try:
                self.guard(scope["headers"], model_call=rest in PROTOCOLS)
            except ProxyError:
                counters.browser_requests_refused += 1
                raise
            protocol = PROTOCOLS.get(rest) if scope["method"] == "POST" else None
            if protocol is not None:
                entry = Entry(protocol, url_scope, scope[REQUEST_ID], url_user)
                await handler(entry, scope, receive, send)
                return
            _check_segments(rest)
            # Upstream paths go as the client wrote them: "%2F" stays escaped.
            raw_path: bytes | None = scope.get("raw_path")
            if raw_path:
                rest = split_path(split_user(raw_path.decode("latin-1"))[1])[1]
            upstream = _protocol_under(rest).upstream(gateway.settings)
            await handle_passthrough(gateway, upstream, rest, scope, receive, send)
        finally:
            counters.in_flight -= 1


def _protocol_under(rest: str) -> WireProtocol:
    """The protocol whose path `rest` is or is under (its upstream serves it), else the
    default upstream's."""
    for path, protocol in PROTOCOLS.items():
        if rest == path or rest.startswith(path + "/"):
            return protocol
    return CHAT_COMPLETIONS
