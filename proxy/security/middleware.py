"""The outermost layer of every HTTP call: request id, access key or token, and errors as
envelopes."""

from __future__ import annotations

import logging
import random
import time
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
    (`/api`: JSON) — never a traceback."""

    def __init__(
        self,
        app: ASGIApp,
        credentials: Credentials,
        proxy: ASGIApp | None = None,
        failures: FailedAttempts | None = None,
    ) -> None:
        self.app = app
        self.credentials = credentials
        self.failures = failures or FailedAttempts()
        # Proxy calls skip the rest of the stack: the router would first try every API and
        # UI route (~60 regex matches), and the browser guard and HTTP-exception layer have
        # nothing to do for them.
        self.proxy = proxy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_request_id()
        scope[REQUEST_ID] = request_id
        stamp = (b"x-tenure-request-id", request_id.encode())
        path: str = scope["path"]
        proxied = self.proxy is not None and is_proxy_path(path)
        level = logging.INFO if proxied else logging.DEBUG
        if not access_log.isEnabledFor(level):
            await self._serve(scope, receive, send, request_id, stamp)
            return
        began = time.perf_counter()
        status, injected = 0, None

        async def watched(message: Message) -> None:
            nonlocal status, injected
            if message["type"] == "http.response.start":
                status = message["status"]
                for name, value in message.get("headers", ()):
                    if name == b"x-tenure-injected":
                        injected = int(value)
            await send(message)

        try:
            await self._serve(scope, receive, watched, request_id, stamp)
        finally:
            ms = round((time.perf_counter() - began) * 1000, 1)
            user = scope.get(ACCESS_USER)
            fields = {
                "method": scope["method"],
                "path": path,
                "status": status,
                "ms": ms,
                "user": user,
                "injected": injected,
                "request_id": request_id,
            }
            access_log.log(
                level,
                "%s %s %s %.1f ms user=%s injected=%s %s",
                scope["method"],
                path,
                status or "-",
                ms,
                user or "-",
                "-" if injected is None else injected,
                request_id,
                extra=fields,
            )

    async def _serve(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        request_id: str,
        stamp: tuple[bytes, bytes],
    ) -> None:
        started = False

        async def stamped(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": [*message.get("headers", ()), stamp]}
            await send(message)

        path: str = scope["path"]
        if self.credentials.enforced and needs_key(path):
            grant = await self._admit(scope, stamped, path)
            if grant is None:
                return
            scope[GRANT] = grant
        app = self.proxy if self.proxy is not None and is_proxy_path(path) else self.app
        try:
            await app(scope, receive, stamped)
        except ClientGone:
            return
        except UpstreamBroke:
            raise  # the server aborts the connection: the client sees a cut transfer
        except (ProxyError, BeliefError) as exc:
            if started:
                raise
            error = as_proxy_error(exc)
            _count(scope, error)
            await send_error(stamped, error, path=path)
        except Exception as exc:
            log.exception("request %s %s failed", scope["method"], path)
            if started:
                raise
            await send_error(stamped, as_proxy_error(exc, request_id=request_id), path=path)

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
