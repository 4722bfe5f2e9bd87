"""Access control: with `TENURE_API_KEY` set, every call except `/healthz`, the login page and
the static files must present it as `Authorization: Bearer <key>` (Anthropic clients may send
it as `x-api-key`), or carry the session cookie the login page sets for the browser UI."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from collections.abc import Iterable

from starlette.requests import cookie_parser

OPEN_PATHS = frozenset({"/healthz", "/login", "/favicon.ico"})
OPEN_PREFIXES = ("/static/",)
SESSION_COOKIE = "tenure_session"
# Browser pages (not the API, not the proxy paths): an unauthenticated GET goes to /login.
UI_PAGES = ("/beliefs", "/review", "/audit", "/rules", "/status", "/logout")


def _signature(key: str, nonce: str) -> str:
    return hmac.new(key.encode(), f"tenure-session:{nonce}".encode(), hashlib.sha256).hexdigest()


def new_session(key: str) -> str:
    """A session token: a random nonce signed with the access key (valid until the key changes)."""
    nonce = secrets.token_urlsafe(18)
    return f"{nonce}.{_signature(key, nonce)}"


def valid_session(token: str, key: str) -> bool:
    nonce, _, signature = token.partition(".")
    return bool(nonce) and hmac.compare_digest(signature, _signature(key, nonce))


def cookies_of(headers: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    jar: dict[str, str] = {}
    for name, value in headers:
        if name == b"cookie":
            jar.update(cookie_parser(value.decode("latin-1")))
    return jar


def bearer_authorized(headers: Iterable[tuple[bytes, bytes]], key: str) -> bool:
    """The key came in a header (a script or SDK, never a cross-site browser request)."""
    expected = key.encode()
    for name, value in headers:
        if name == b"authorization":
            scheme, _, token = value.partition(b" ")
            if scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), expected):
                return True
        elif name == b"x-api-key" and hmac.compare_digest(value.strip(), expected):
            return True
    return False


def authorized(headers: Iterable[tuple[bytes, bytes]], key: str) -> bool:
    headers = list(headers)
    if bearer_authorized(headers, key):
        return True
    session = cookies_of(headers).get(SESSION_COOKIE)
    return session is not None and valid_session(session, key)


def needs_key(path: str, key: str | None) -> bool:
    return key is not None and path not in OPEN_PATHS and not path.startswith(OPEN_PREFIXES)


def is_ui_page(path: str) -> bool:
    return path == "/" or any(path == p or path.startswith(p + "/") for p in UI_PAGES)


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The host of a `Host` header without its port: `[::1]:5757` -> `::1`."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header
