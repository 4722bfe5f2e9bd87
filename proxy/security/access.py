"""Access control: with `TENURE_API_KEY` set or any access token made, every call except
`/healthz`, the login page and the static files must present the key or a token as
`Authorization: Bearer <key>` (Anthropic clients may send it as `x-api-key`), or carry the
session cookie the login page sets for the browser UI."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
import secrets
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

from starlette.requests import cookie_parser

OPEN_PATHS = frozenset({"/healthz", "/login", "/favicon.ico"})
OPEN_PREFIXES = ("/static/",)
SESSION_COOKIE = "tenure_session"
# Browser pages (not the API, not the proxy paths): an unauthenticated GET goes to /login.
UI_PAGES = (
    "/beliefs",
    "/review",
    "/audit",
    "/rules",
    "/sources",
    "/status",
    "/api-reference",
    "/logout",
)


def _signature(key: str, nonce: str, secret: str) -> str:
    message = f"tenure-session:{secret}:{nonce}".encode()
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()


class Sessions:
    """The browser sessions of this server: a random nonce signed with the access key and a
    secret of this process. Logging out revokes the nonce, so the cookie stops working even
    if it was copied; a restart (a new secret) ends every session."""

    MAX_REVOKED = 100_000

    def __init__(self) -> None:
        self._secret = secrets.token_hex(16)
        self._revoked: set[str] = set()
        self.on_revoke: Callable[[str], None] | None = None  # replicas share revocations

    def share(self, secret: str) -> None:
        """Sign with `secret` (kept in the shared database, so every replica accepts the
        cookies of every other)."""
        self._secret = secret

    def revoked_elsewhere(self, nonce: str) -> None:
        self._revoked.add(nonce)

    def new(self, key: str) -> str:
        nonce = secrets.token_urlsafe(18)
        return f"{nonce}.{_signature(key, nonce, self._secret)}"

    def valid(self, token: str, key: str) -> bool:
        nonce, _, signature = token.partition(".")
        expected = _signature(key, nonce, self._secret)
        return (
            bool(nonce) and hmac.compare_digest(signature, expected) and nonce not in self._revoked
        )

    def revoke(self, token: str) -> None:
        nonce = token.partition(".")[0]
        if len(self._revoked) >= self.MAX_REVOKED:  # rather than grow without end: new secret
            self._revoked.clear()
            self._secret = secrets.token_hex(16)
        self._revoked.add(nonce)
        if self.on_revoke is not None:
            self.on_revoke(nonce)


def cookies_of(headers: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    jar: dict[str, str] = {}
    for name, value in headers:
        if name == b"cookie":
            jar.update(cookie_parser(value.decode("latin-1")))
    return jar


def presented_key(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """The key or token the request sent (`Authorization: Bearer …` or `x-api-key`)."""
    for name, value in headers:
        if name == b"authorization":
            scheme, _, token = value.partition(b" ")
            if scheme.lower() == b"bearer":
                return token.strip().decode("latin-1")
        elif name == b"x-api-key":
            return value.strip().decode("latin-1")
    return None


def needs_key(path: str) -> bool:
    return path not in OPEN_PATHS and not path.startswith(OPEN_PREFIXES)


def is_ui_page(path: str) -> bool:
    return path == "/" or any(path == p or path.startswith(p + "/") for p in UI_PAGES)


@lru_cache(maxsize=256)  # every request asks, of the few names its clients use
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


class FailedAttempts:
    """Wrong access keys per client address: after `limit` within `window_s` seconds that
    address is refused (429) until the oldest of them is `window_s` old, right key or not, so
    the key cannot be guessed at speed. Other addresses are not affected."""

    def __init__(
        self,
        limit: int = 10,
        window_s: float = 60.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = 10_000,
    ) -> None:
        self.limit = limit
        self.window_s = window_s
        self._clock = clock
        self._max_clients = max_clients
        self._failures: dict[str, deque[float]] = {}
        self.on_failed: Callable[[str], None] | None = None  # replicas share the count

    def retry_after(self, client: str) -> int | None:
        """Seconds until `client` may try again, or None when it may now."""
        failures = self._recent(client)
        if failures is None or len(failures) < self.limit:
            return None
        return max(1, math.ceil(failures[0] + self.window_s - self._clock()))

    def failed(self, client: str) -> None:
        self._add(client, self._clock())
        if self.on_failed is not None:
            self.on_failed(client)

    def failed_elsewhere(self, client: str, ago_s: float) -> None:
        """Count a wrong key another replica saw `ago_s` seconds ago."""
        self._add(client, self._clock() - max(0.0, ago_s))

    def _add(self, client: str, at: float) -> None:
        failures = self._recent(client)
        if failures is None:
            if len(self._failures) >= self._max_clients:
                self._failures.pop(next(iter(self._failures)))  # the longest-known address
            failures = self._failures[client] = deque(maxlen=self.limit)
        failures.append(at)
        if len(failures) > 1 and failures[-2] > at:  # another replica's, seen late: keep order
            self._failures[client] = deque(sorted(failures), maxlen=self.limit)

    def _recent(self, client: str) -> deque[float] | None:
        failures = self._failures.get(client)
        if failures is None:
            return None
        cutoff = self._clock() - self.window_s
        while failures and failures[0] <= cutoff:
            failures.popleft()
        if not failures:
            del self._failures[client]
            return None
        return failures


def client_address(scope: Mapping[str, Any]) -> str:
    """The peer's address (the socket's, never a forwarded-for header)."""
    client = scope.get("client")
    if isinstance(client, (tuple, list)) and client:
        return str(client[0])
    return "unknown"
