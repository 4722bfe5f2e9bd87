"""Sending complete replies the gateway writes itself (errors, synthetic answers, JSON)."""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import Send

from proxy.errors import JSON, ProxyError, error_reply

Header = tuple[bytes, bytes]
SSE = b"text/event-stream"


async def send_bytes(
    send: Send,
    status: int,
    body: bytes,
    *,
    content_type: bytes = JSON,
    headers: Iterable[Header] = (),
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def send_events(send: Send, events: list[bytes], *, headers: Iterable[Header] = ()) -> None:
    """A complete SSE stream, one body message per event."""
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", SSE), (b"cache-control", b"no-cache"), *headers],
        }
    )
    for event in events:
        await send({"type": "http.response.body", "body": event, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def send_error(
    send: Send, error: ProxyError, *, path: str, retry_after: int | None = None
) -> None:
    """The error as the path's clients expect it (`retry_after`: seconds, sent as the
    `Retry-After` header)."""
    body, content_type = error_reply(error, path)
    headers = [(b"retry-after", str(retry_after).encode())] if retry_after is not None else []
    if content_type != JSON:  # a page runs nothing and shows in no frame
        headers.append((b"content-security-policy", b"default-src 'none'"))
    await send_bytes(send, error.status, body, content_type=content_type, headers=headers)
