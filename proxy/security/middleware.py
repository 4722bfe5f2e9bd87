"""The outermost layer of every HTTP call: request id, access key or token, and errors as
envelopes."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Awaitable, Iterable
from urllib.parse import urlencode

from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from beliefs.model.errors import BeliefError
from proxy.errors import ProxyError, as_proxy_error
from proxy.gateway.forward import UpstreamBroke
from proxy.gateway.replies import send_bytes, send_error
from proxy.gateway.request_body import ClientGone
from proxy.scopes import ACCESS_USER, CLIENT_ACCESS, GRANT, REQUEST_ID
from proxy.security.access import (
    SESSION_COOKIE,
    FailedAttempts,
    client_address,
    cookies_of,
    is_ui_page,
    needs_key,
)
from proxy.security.credentials import Credentials
from proxy.security.grants import Grant, refused

log = logging.getLogger("tenure.proxy")
access_log = logging.getLogger("tenure.access")


def new_request_id() -> str:
    # Unique, not secret: `secrets` costs a getrandom() call per request (~2 % of the proxy).
    return f"req_{random.getrandbits(96):024x}"


class GatewayMiddleware:
    """Stamps `X-Tenure-Request-Id` on every response (errors too), checks the access key or
    token (and puts what it grants in the scope), and turns errors into the OpenAI envelope
    (`/api`: JSON) — never a traceback.

    The app hands proxy paths straight to `proxy_call` (see `proxy.app.TenureApp`): the router
    would first try every API and UI route (~60 regex matches), and Starlette's error layer,
    the browser guard and the HTTP-exception layer have nothing to do for them."""

    def __init__(
        self,
        app: ASGIApp | None,
        credentials: Credentials,
        proxy: ASGIApp | None = None,
        failures: FailedAttempts | None = None,
    ) -> None:
        self.app = app
        self.credentials = credentials
        self.failures = failures or FailedAttempts()
        self.proxy = proxy

    def around(self, app: ASGIApp) -> GatewayMiddleware:
        """This middleware, around `app` (the rest of the stack, built by Starlette)."""
        self.app = app
        return self

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self.app is not None
        if scope["type"] != "http":
            await self.app(scope, receive, send)
        elif self.proxy is not None and is_proxy_path(scope["path"]):
            await self.serve(scope, receive, send, self.proxy, logging.INFO)
        else:
            await self.serve(scope, receive, send, self.app, logging.DEBUG)

    async def proxy_call(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A proxy path's request (an access line at INFO)."""
        assert self.proxy is not None
        await self.serve(scope, receive, send, self.proxy, logging.INFO)

    async def serve(
        self, scope: Scope, receive: Receive, send: Send, app: ASGIApp, level: int
    ) -> None:
        request_id = new_request_id()
        scope[REQUEST_ID] = request_id
        reply = Reply(send, request_id)
        if not access_log.isEnabledFor(level):
            await self._serve(scope, receive, reply, app)
            return
        began = time.perf_counter()
        try:
            await self._serve(scope, receive, reply, app)
        finally:
            log_access(level, scope, reply, time.perf_counter() - began)

    async def _serve(self, scope: Scope, receive: Receive, reply: Reply, app: ASGIApp) -> None:
        path: str = scope["path"]
        if self.credentials.enforced and needs_key(path):
            grant = await self._admit(scope, reply, path)
            if grant is None:
                return
            scope[GRANT] = grant
        try:
            await app(scope, receive, reply)
        except ClientGone:
            return
        except UpstreamBroke:
            raise  # the server aborts the connection: the client sees a cut transfer
        except (ProxyError, BeliefError) as exc:
            if reply.started:
                raise
            error = as_proxy_error(exc)
            _count(scope, error)
            await send_error(reply, error, path=path)
        except Exception as exc:
            log.exception("request %s %s failed", scope["method"], path)
            if reply.started:
                raise
            await send_error(reply, as_proxy_error(exc, request_id=reply.request_id), path=path)

    async def _admit(self, scope: Scope, send: Send, path: str) -> Grant | None:
        """What the request's key, token or session grants, or None once refused (401 for no
        or a wrong credential, 403 for a client token outside its reach, 429 when guessing)."""
        client = client_address(scope)
        wait = self.failures.retry_after(client)
        if wait is not None:
            await send_error(send, too_many_failures(wait), path=path, retry_after=wait)
            return None
        grant = await self.credentials.grant(scope["headers"])
        if isinstance(grant, ProxyError):
            if is_ui_page(path) and scope["method"] in ("GET", "HEAD"):
                await send_login_redirect(send, scope)
                return None
            if _presented_credentials(scope["headers"]):
                self.failures.failed(client)
            await send_error(send, grant, path=path)
            return None
        if not grant.operator and not client_may_call(scope, path):
            await send_error(send, operator_only(path), path=path)
            return None
        return grant


_START = "http.response.start"


class Reply:
    """The request's `send`: stamps the request id on the response head and keeps the head's
    status and headers for the access line. Body messages go straight through (the server's
    own awaitable is returned, no frame of ours in between)."""

    __slots__ = ("headers", "request_id", "send", "started", "status")

    def __init__(self, send: Send, request_id: str) -> None:
        self.send = send
        self.request_id = request_id
        self.started = False
        self.status = 0
        self.headers: Iterable[tuple[bytes, bytes]] = ()

    def __call__(self, message: Message) -> Awaitable[None]:
        if message["type"] == _START:
            self.started = True
            self.status = message["status"]
            self.headers = headers = message.get("headers", ())
            stamp = (b"x-tenure-request-id", self.request_id.encode())
            message = {**message, "headers": [*headers, stamp]}
        return self.send(message)

    def injected(self) -> int | None:
        for name, value in self.headers:
            if name == b"x-tenure-injected":
                return int(value)
        return None


def log_access(level: int, scope: Scope, reply: Reply, seconds: float) -> None:
    """One access line, formatted here once: no caller lookup, no %-formatting in the
    handler. Its fields also go on the record as attributes (the JSON log's keys)."""
    ms = round(seconds * 1000, 1)
    method: str = scope["method"]
    path: str = scope["path"]
    user = scope.get(ACCESS_USER)
    injected = reply.injected()
    status = reply.status
    line = (
        f"{method} {path} {status or '-'} {ms:.1f} ms user={user or '-'} "
        f"injected={'-' if injected is None else injected} {reply.request_id}"
    )
    fields = {
        "method": method,
        "path": path,
        "status": status,
        "ms": ms,
        "user": user,
        "injected": injected,
        "request_id": reply.request_id,
    }
    access_log.handle(
        access_log.makeRecord(access_log.name, level, "", 0, line, (), None, None, fields)
    )


def too_many_failures(wait: int) -> ProxyError:
    return ProxyError(
        429,
        f"too many wrong access keys from this address; try again in {wait} s",
        type="rate_limit_error",
        code="too_many_failed_logins",
    )


def _presented_credentials(headers: list[tuple[bytes, bytes]]) -> bool:
    """A key or session was sent (and was wrong); a bare request is no guess at the key."""
    if any(name in (b"authorization", b"x-api-key") for name, _ in headers):
        return True
    return SESSION_COOKIE in cookies_of(headers)


def is_proxy_path(path: str) -> bool:
    """Paths only the proxy serves (the router sends the rest of them there too)."""
    if path.startswith("/scope/") and path.endswith("/mcp") and "/v1/" not in path:
        return False  # the memory tools under a URL scope (proxy/mcp/server.py)
    return path.startswith(("/v1/", "/scope/")) or path in ("/chat/completions", "/messages")


async def send_login_redirect(send: Send, scope: Scope) -> None:
    """A browser without a session goes to the login page, then back where it was."""
    target = scope["path"] + (f"?{scope['query_string'].decode()}" if scope["query_string"] else "")
    location = "/login?" + urlencode({"next": target})
    await send_bytes(
        send, 303, b"", content_type=b"text/plain", headers=[(b"location", location.encode())]
    )


def _count(scope: Scope, error: ProxyError) -> None:
    runtime = getattr(getattr(scope.get("app"), "state", None), "runtime", None)
    if runtime is None:
        return
    if error.status == 502:
        runtime.counters.upstream_unreachable += 1
    elif error.status == 504:
        runtime.counters.upstream_timeouts += 1


def client_may_call(scope: Scope, path: str) -> bool:
    """Whether a client token may call this path: the proxy paths, and the routes marked
    `open_to_clients` (which confine what they serve); never the UI or the operator's API."""
    if is_proxy_path(path):
        return True
    app = scope.get("app")
    for route in getattr(getattr(app, "router", None), "routes", ()):
        match, _ = route.matches(scope)
        if match is Match.FULL:
            return bool(getattr(getattr(route, "endpoint", None), CLIENT_ACCESS, False))
    return False


def operator_only(path: str) -> ProxyError:
    return refused(
        f"{path} needs the operator's key or token; this token reaches only its user's "
        "memory (the proxy paths, /mcp, and the belief, recall and persona API)"
    )
