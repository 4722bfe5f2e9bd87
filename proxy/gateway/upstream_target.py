"""Where an upstream request goes and how its head is written: the URL's target (connection key,
Host header, escaped request line) and the errors the pooled client raises."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote, urlsplit


class UpstreamError(Exception):
    """The exchange with the upstream failed."""


class UpstreamUnreachable(UpstreamError):
    """No connection, or the upstream dropped it before answering (502)."""


class UpstreamTimeout(UpstreamError, TimeoutError):
    """No connection or no reply bytes within the configured time (504)."""


class UpstreamBroken(UpstreamError):
    """The reply stopped short or was not HTTP."""


@dataclass(frozen=True, slots=True)
class Target:
    """Where a URL points: its connection key and what goes on the request line."""

    scheme: str
    host: str
    port: int
    authority: str  # the Host header: host[:port] as written, brackets kept
    path: str  # path and query, escaped for the request line

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)


@lru_cache(maxsize=1024)
def target_of(url: str) -> Target:
    """Raises:
    UpstreamUnreachable: not an http(s) URL with a host.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise UpstreamUnreachable(f"{url!r} is not an http:// or https:// URL")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise UpstreamUnreachable(f"{url!r} has a bad port") from None
    authority = parts.netloc.rpartition("@")[2]
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(scheme, parts.hostname, port, authority, quote(path, safe=_PATH_SAFE))


def request_head(
    method: str, target: Target, headers: list[tuple[str, str]], body: bytes | None
) -> bytes:
    """Raises:
    UpstreamUnreachable: a header cannot be sent (a line break, or not Latin-1).
    """
    lines = [f"{method} {target.path} HTTP/1.1", f"Host: {target.authority}"]
    for name, value in headers:
        if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
            raise UpstreamUnreachable(f"header {name!r} holds a line break; it cannot be sent")
        lines.append(f"{name}: {value}")
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    try:
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    except UnicodeEncodeError as exc:
        raise UpstreamUnreachable(
            f"a header holds {exc.object[exc.start : exc.end]!r}, which HTTP headers cannot carry"
        ) from None


# Characters a request target may hold as they are (RFC 3986 pchar, "/", "?" and "%" of escapes).
_PATH_SAFE = "/?%:@!$&'()*+,;=~-._"
