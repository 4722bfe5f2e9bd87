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
from collections.abc import Collection, Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from proxy.errors import ProxyError
from proxy.gateway.replies import send_error
from proxy.scopes import grant_of
from proxy.security.access import (
    SESSION_COOKIE,
    cookies_of,
    host_name,
    is_loopback,
    is_ui_page,
    presented_key,
)

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


# The content types a web page may send to another site without asking first (no CORS
# preflight): a model call in one of them came from a page, not from an SDK.
SIMPLE_CONTENT_TYPES = frozenset(
    {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data"}
)


def refuse_browsers(
    headers: Headers,
    *,
    loopback_only: bool,
    model_call: bool,
    allowed_origins: Collection[str] = (),
) -> None:
    """Refuse a proxy call a browser made for another site: a foreign `Host` on a loopback
    bind (DNS rebinding), an `Origin` not this server's or `Sec-Fetch-Site: cross-site`, and a
    model call (chat, messages, responses) a browser sent in a simple content type. SDKs and
    agents send no `Origin` and JSON bodies, so none of this touches them; scripts that post
    JSON as form data (`curl -d`, Python's urllib) are no browser either and pass.

    Raises:
        ProxyError: 421 for the host, 403 for the origin, 415 for the content type.
    """
    headers = list(headers)
    # No Host at all is an HTTP/1.0 script's request: a browser always names the host.
    named = any(name == b"host" for name, _ in headers)
    if loopback_only and named and (problem := foreign_host(headers)) is not None:
        raise ProxyError(
            421,
            f"{problem}: a web page whose domain points here (DNS rebinding) must not reach "
            "the model or the memory; clients on this machine use http://127.0.0.1 or "
            "http://localhost, or set TENURE_HOST to serve other hosts with TENURE_API_KEY",
            param="Host",
            code="misdirected_request",
        )
    problem = cross_site(headers)
    if problem is None and (b"sec-fetch-site", b"same-site") in headers:
        # A page on another port of this machine: the same site, another origin. A GET
        # from it carries no Origin.
        problem = "the request comes from another origin (Sec-Fetch-Site: same-site)"
    if problem is not None and not _trusted(headers, allowed_origins):
        raise ProxyError(
            403,
            f"{problem}: web pages may not call the model through the gateway (agents and "
            "SDKs send no Origin header); to let a web app you trust call it, add its origin "
            "to TENURE_ALLOWED_ORIGINS",
            param="Origin",
            code="cross_site_request",
        )
    if not model_call or not _from_a_browser(headers):
        return
    kind = next((v.decode("latin-1") for n, v in headers if n == b"content-type"), "")
    if kind.split(";")[0].strip().lower() in SIMPLE_CONTENT_TYPES:
        raise ProxyError(
            415,
            f"Content-Type {kind!r} from a browser is what a web page sends to another site "
            "without asking; send the request body as JSON with Content-Type: application/json",
            param="Content-Type",
            code="unsupported_content_type",
        )


def _trusted(headers: list[tuple[bytes, bytes]], allowed: Collection[str]) -> bool:
    """The `Origin` is one the operator listed, or an app's own scheme (`app://`,
    `tauri://`, `vscode-webview://`): no page on the web can take either."""
    origin = next((v.decode("latin-1").lower() for n, v in headers if n == b"origin"), None)
    if origin is None or origin == "null":
        return False
    return origin in allowed or urlsplit(origin).scheme not in ("http", "https")


def _from_a_browser(headers: list[tuple[bytes, bytes]]) -> bool:
    """A browser's marks: `Origin` or `Sec-Fetch-*` (every current browser sends them on a
    cross-origin write), or a browser's `User-Agent` (older ones sent neither)."""
    for name, value in headers:
        if name == b"origin" or name.startswith(b"sec-fetch-"):
            return True
        if name == b"user-agent" and value.startswith(b"Mozilla/"):
            return True
    return False


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
