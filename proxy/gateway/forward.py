"""Byte-level pass-through to an upstream (the one a protocol adapter names) over the pooled
upstream client, and the relay of its reply — JSON or SSE — as the bytes arrive."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from starlette.types import Receive, Scope, Send

from proxy.errors import ProxyError
from proxy.gateway.upstream_pool import UpstreamPool, UpstreamResponse
from proxy.gateway.upstream_target import UpstreamError, UpstreamTimeout

log = logging.getLogger("tenure.proxy")

Header = tuple[bytes, bytes]


@dataclass(frozen=True, slots=True)
class Upstream:
    """Where a protocol's calls go: the base URL, and the key that replaces the client's."""

    base: str
    key: str | None
    key_setting: str  # the setting the key came from, named in the reply when it is refused
    bearer: bool = True  # the key goes as `Authorization: Bearer`, else as `x-api-key`


# Connection-level headers (RFC 9110 §7.6.1) and what the proxy recomputes or consumes itself.
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
_NOT_FORWARDED = _HOP_BY_HOP | {"host", "content-length", "expect", "accept-encoding"}
_CLIENT_CREDENTIALS = ("authorization", "x-api-key")
# Encodings the proxy can itself decode to read the finished turn.
_DECODABLE = ("gzip", "deflate", "identity")


def upstream_headers(
    headers: Iterable[Header],
    *,
    api_key: str | None,
    bearer: bool,
    forward_credentials: bool,
) -> list[tuple[str, str]]:
    """The client's headers minus hop-by-hop and Tenure's own, with the upstream credentials.

    With `api_key` the upstream key replaces the client's; without it the client's
    `Authorization` / `x-api-key` is forwarded only when `forward_credentials` (no gateway key).
    """
    headers = list(headers)
    listed = _connection_listed(headers)
    out: list[tuple[str, str]] = []
    for raw_name, raw_value in headers:
        name = raw_name.decode("latin-1").lower()
        if name in _NOT_FORWARDED or name.startswith("x-tenure-") or name == "x-agent-id":
            continue
        if name in listed:
            continue
        if name in _CLIENT_CREDENTIALS and (api_key or not forward_credentials):
            continue
        out.append((name, raw_value.decode("latin-1")))
    accept = _accept_encoding(headers)
    if accept:
        out.append(("accept-encoding", accept))
    if api_key:
        out.append(("authorization", f"Bearer {api_key}") if bearer else ("x-api-key", api_key))
    return out


def _values(headers: Iterable[Header], name: bytes) -> list[str]:
    """The comma-separated items of every `name` header line (a header may be repeated)."""
    return [
        item.strip()
        for raw_name, raw_value in headers
        if raw_name.lower() == name
        for item in raw_value.decode("latin-1").split(",")
        if item.strip()
    ]


def _connection_listed(headers: Iterable[Header]) -> frozenset[str]:
    """Header names the `Connection` header marks as this hop's only (RFC 9110 §7.6.1)."""
    return frozenset(item.lower() for item in _values(headers, b"connection"))


def _accept_encoding(headers: Iterable[Header]) -> str:
    """The client's Accept-Encoding restricted to encodings the proxy can read back; `identity`
    when the client named only others (no header at all would allow any encoding)."""
    wanted = _values(headers, b"accept-encoding")
    kept = [p for p in wanted if p.split(";")[0].strip().lower() in _DECODABLE]
    if wanted and not kept:
        return "identity"
    return ", ".join(kept)


# Replies that never have a body: a Content-Length there describes another reply, and the
# server would hold the (empty) body against it.
_BODILESS = (204, 304)


def response_headers(resp: UpstreamResponse, extra: Iterable[Header]) -> list[Header]:
    """The upstream's headers as sent (status, rate limits, retry-after …) plus Tenure's."""
    listed = _connection_listed(resp.raw_headers)
    bodiless = resp.status in _BODILESS
    out = []
    for name, value in resp.raw_headers:
        lower = name.decode("latin-1").lower()
        if lower in _HOP_BY_HOP or lower in listed or lower == "server":
            continue  # the provider's software is not the client's business
        if bodiless and lower == "content-length":
            continue
        out.append((name.lower(), value))
    out.extend(extra)
    return out


def with_query(url: str, scope: Scope) -> str:
    """`url` with the client's query string, as the client wrote it."""
    query: bytes = scope.get("query_string", b"")
    return f"{url}?{query.decode('latin-1')}" if query else url


async def open_upstream(
    pool: UpstreamPool,
    method: str,
    url: str,
    headers: list[tuple[str, str]],
    body: bytes | None,
) -> UpstreamResponse:
    """Send the request and wait for the response head (the pool sends it once more when a
    pooled connection turns out to be closed).

    Raises:
        ProxyError: 502 when the upstream cannot be reached, 504 when it does not answer in time.
    """
    try:
        return await pool.request(method, url, headers, body)
    except UpstreamTimeout as exc:
        raise ProxyError(
            504,
            f"upstream {url} did not answer in time ({exc}); "
            "check TENURE_UPSTREAM_URL or raise TENURE_UPSTREAM_TIMEOUT",
            type="upstream_timeout",
            code="upstream_timeout",
        ) from None
    except UpstreamError as exc:
        raise ProxyError(
            502,
            f"upstream {url} could not be reached ({exc}); check TENURE_UPSTREAM_URL",
            type="upstream_unreachable",
            code="upstream_unreachable",
        ) from None


class UpstreamBroke(Exception):
    """The upstream failed after the response started: the client's transfer is cut."""


# Lines that open a stream's last event: OpenAI's `[DONE]`, Anthropic's `message_stop`, the
# Responses API's terminal events. The end is held back from the client until `before_end` ran.
_LAST_EVENT = (
    b"data: [DONE]",
    b"data:[DONE]",
    b"event: message_stop",
    b'data: {"type":"message_stop"',
    b'data: {"type": "message_stop"',
    b"event: response.completed",
    b"event: response.failed",
    b"event: response.incomplete",
)


def releasable(data: bytes) -> int:
    """How many leading bytes of an SSE body's not-yet-sent `data` may go to the client before
    the reply's end is made durable: every complete line before the stream's last event."""
    end = data.rfind(b"\n") + 1
    for marker in _LAST_EVENT:
        at = data.find(marker, 0, end)
        while at > 0 and data[at - 1 : at] != b"\n":  # a marker inside a line is content
            at = data.find(marker, at + 1, end)
        if at >= 0:
            end = min(end, at)
    return end


BeforeEnd = Callable[[], Awaitable[None]]


async def relay(
    resp: UpstreamResponse,
    send: Send,
    headers: list[Header],
    capture: list[bytes] | None,
    before_end: BeforeEnd | None = None,
) -> None:
    """Send the upstream's status, headers and body chunks to the client as they arrive.

    With `before_end`, the reply's last event (SSE) or last chunk (any other body) is held
    until `before_end()` has run, so whatever it does happens before the client has it all.

    Raises:
        UpstreamBroke: the upstream failed mid-body; the server then aborts the connection so
            the client sees a cut transfer rather than a short "complete" one.
    """
    await send({"type": "http.response.start", "status": resp.status, "headers": headers})
    sse = "text/event-stream" in resp.headers.get("content-type", "")
    held = b""
    try:
        async for chunk in resp.chunks():
            if capture is not None:
                capture.append(chunk)
            if before_end is None:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                continue
            if not sse:  # all but the newest chunk: its last bytes may complete the reply
                out, held = held, chunk
            else:
                data = held + chunk if held else chunk
                cut = releasable(data)
                out, held = data[:cut], data[cut:]
            if out:
                await send({"type": "http.response.body", "body": out, "more_body": True})
    except UpstreamError as exc:
        if held:  # the client gets what arrived, then a cut transfer
            await send({"type": "http.response.body", "body": held, "more_body": True})
        raise UpstreamBroke(f"upstream failed mid-response: {type(exc).__name__}: {exc}") from exc
    if before_end is not None:
        await before_end()
    await send({"type": "http.response.body", "body": held, "more_body": False})


@dataclass(slots=True)
class Exchange:
    """How one proxied exchange went."""

    status: int = 0
    content_type: str = ""
    content_encoding: str = ""
    completed: bool = False
    disconnected: bool = False
    broken: str = ""
    finished: bool = False
    chunks: list[bytes] | None = None  # the relayed body, when the caller asked to capture it


async def exchange(
    pool: UpstreamPool,
    method: str,
    url: str,
    *,
    headers: list[tuple[str, str]],
    body: bytes | None,
    receive: Receive,
    send: Send,
    extra_headers: list[Header],
    capture: bool = False,
    before_end: Callable[[Exchange], Awaitable[None]] | None = None,
) -> Exchange:
    """Forward one request and relay the reply (kept in `chunks` with `capture`); a client
    disconnect cancels the upstream call
    (the upstream sees its connection closed). An upstream failing mid-reply is reported in
    `broken`: the caller raises `UpstreamBroke` after its bookkeeping. `before_end(outcome)`
    runs once the whole reply arrived, before its end is relayed (see `relay`).

    Raises:
        ProxyError: 502/504 before any byte of the reply was sent.
    """
    task = asyncio.current_task()
    assert task is not None
    outcome = Exchange(chunks=[] if capture else None)

    def on_disconnect(watcher: asyncio.Task[None]) -> None:
        if outcome.finished or watcher.cancelled() or watcher.exception() is not None:
            return
        outcome.disconnected = True
        task.cancel()

    watcher = asyncio.create_task(_wait_for_disconnect(receive))
    watcher.add_done_callback(on_disconnect)
    resp: UpstreamResponse | None = None
    try:
        resp = await open_upstream(pool, method, url, headers, body)
        outcome.status = resp.status
        outcome.content_type = resp.headers.get("content-type", "")
        outcome.content_encoding = resp.headers.get("content-encoding", "")
        finish = None if before_end is None else _bound(before_end, outcome)
        await relay(resp, send, response_headers(resp, extra_headers), outcome.chunks, finish)
        outcome.completed = True
    except UpstreamBroke as exc:
        outcome.broken = str(exc)
        log.warning("%s: %s", url, exc)
    except asyncio.CancelledError:
        if not outcome.disconnected:
            raise
        task.uncancel()
    finally:
        outcome.finished = True
        watcher.cancel()
        if resp is not None:
            if outcome.completed:
                resp.release()
            else:
                resp.close()
    return outcome


def _bound(before_end: Callable[[Exchange], Awaitable[None]], outcome: Exchange) -> BeforeEnd:
    async def run() -> None:
        await before_end(outcome)

    return run


async def _wait_for_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
