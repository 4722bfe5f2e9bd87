"""Cross-site request protection for the browser UI and the API it calls.

Double-submit token: the UI sets a random `tenure_csrf` cookie (SameSite=Strict, HttpOnly) and
renders the same value into every form (`csrf_token`) and a `<meta>` tag for scripts
(`X-CSRF-Token` header). A state-changing request whose Origin is another site is refused
outright; one that carries our cookies must also carry the matching token. Scripts that
authenticate with the bearer key or a token (or send no cookies at all) are not browsers
acting on a session and need no token.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from proxy.errors import ProxyError
from proxy.gateway.replies import send_error
from proxy.security.access import (
    SESSION_COOKIE,
    cookies_of,
    host_name,
    is_loopback,
    is_ui_page,
    presented_key,
)
from proxy.security.grants import grant_of

CSRF_COOKIE = "tenure_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = b"x-csrf-token"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

Headers = Iterable[tuple[bytes, bytes]]


def new_csrf_token() -> str:
    return secrets.token_urlsafe(24)


def tokens_match(cookie: str | None, submitted: str | None) -> bool:
    return bool(cookie) and bool(submitted) and hmac.compare_digest(cookie or "", submitted or "")


def cross_site(headers: Headers) -> str | None:
    """Why the request comes from another site, or None: Origin (or Sec-Fetch-Site) tells."""
    host = origin = fetch_site = None
    for name, value in headers:
        if name == b"host":
            host = value.decode("latin-1").lower()
        elif name == b"origin":
            origin = value.decode("latin-1").lower()
        elif name == b"sec-fetch-site":
            fetch_site = value.decode("latin-1").lower()
    if fetch_site == "cross-site":
        return "the request comes from another site (Sec-Fetch-Site: cross-site)"
    if origin is None:
        return None
    if origin == "null" or urlsplit(origin).netloc != host:
        return f"the request comes from another site (Origin {origin}, this server is {host})"
    return None


def guarded(path: str) -> bool:
    return path.startswith("/api/") or is_ui_page(path) or path == "/login"


def foreign_host(headers: Headers) -> str | None:
    """Why the `Host` is not this machine's loopback name, or None. A server bound to loopback
    answers its API and pages only as localhost / 127.0.0.1 / ::1, so a web page whose domain
    was re-pointed at 127.0.0.1 (DNS rebinding) cannot read or change memory."""
    host = next((v.decode("latin-1") for n, v in headers if n == b"host"), "")
    if is_loopback(host_name(host)):
        return None
    return f"this server answers as localhost or 127.0.0.1, not as {host!r}"


class BrowserGuard:
    """Refuses cross-site writes to the API and UI, API writes made with our cookies but
    without the CSRF header, and (on a loopback bind) API and page requests addressed to a
    foreign host name. UI form posts check their form token in the handler."""

    def __init__(self, app: ASGIApp, *, loopback_only: bool) -> None:
        self.app = app
        self.loopback_only = loopback_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if not guarded(path):
            await self.app(scope, receive, send)
            return
        headers = scope["headers"]
        if self.loopback_only and (problem := foreign_host(headers)) is not None:
            await _refuse(send, path, problem)
            return
        if scope["method"] not in UNSAFE_METHODS:
            await self.app(scope, receive, send)
            return
        problem = cross_site(headers)
        if problem is None and path.startswith("/api/"):
            problem = self._api_token_problem(scope, headers)
        if problem is not None:
            await _refuse(send, path, problem)
            return
        await self.app(scope, receive, send)

    def _api_token_problem(self, scope: Scope, headers: Headers) -> str | None:
        headers = list(headers)
        if grant_of(scope) is not None and presented_key(headers) is not None:
            return None  # admitted by its key or token (the access middleware checked it)
        jar = cookies_of(headers)
        if CSRF_COOKIE not in jar and SESSION_COOKIE not in jar:
            return None
        submitted = next((v.decode("latin-1") for n, v in headers if n == CSRF_HEADER), None)
        if tokens_match(jar.get(CSRF_COOKIE), submitted):
            return None
        return "missing or wrong CSRF token: send the page's token in the X-CSRF-Token header"


async def _refuse(send: Send, path: str, problem: str) -> None:
    field = "X-CSRF-Token" if "CSRF" in problem else "Host" if "answers" in problem else "Origin"
    await send_error(send, ProxyError(403, problem, type="csrf_rejected", param=field), path=path)
