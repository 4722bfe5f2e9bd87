"""Limits uvicorn's HTTP protocol does not set: the size and count of a request's headers, and
the time a request may take to arrive. Without them one connection can hold tens of megabytes
of headers in memory, or keep a socket open for ever by sending a byte now and then."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger("tenure.serve")

MAX_HEADERS = 200  # far above any client's (the recorded ones send under 20)


class LimitedHttpProtocol(HttpToolsProtocol):
    """uvicorn's protocol over the C parser, refusing a request head over `max_header_bytes`
    or `MAX_HEADERS` headers (431) and cutting a request not fully received within
    `read_timeout_s` of its first byte, or of the connection opening (408)."""

    max_header_bytes = 64 * 1024
    read_timeout_s = 60.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_bytes = 0
        self._in_head = True  # reading a request head: the first one, or one after the last
        self._ended = False  # a request ended within the bytes being fed
        self._header_count = 0
        self._refusal: tuple[int, str] | None = None
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()  # a connection that never sends a request is not kept either

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refusal is not None or self.parser is None:
            return
        self._unset_keepalive_if_required()
        self._ended = False
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return
        except httptools.HttpParserError:
            if self._refusal is None:
                self._refusal = (400, "Invalid HTTP request received.")
        if self._refusal is None and self._in_head and not self._ended:
            # Counted on the raw bytes: the parser keeps a header it has not finished in
            # memory, so its callbacks come too late to bound one huge header. A read that
            # ended a request was mostly that request's body (a large request often arrives
            # in one read): what it holds of the next head is bounded by the read's size.
            self._head_bytes += len(data)
            if self._head_bytes > self.max_header_bytes:
                self._refusal = (
                    431,
                    f"request headers over {self.max_header_bytes} bytes (TENURE_MAX_HEADER_BYTES)",
                )
        if self._refusal is not None:
            self._refuse(*self._refusal)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head, self._head_bytes, self._header_count = True, 0, 0
        if self._deadline is None:
            self._arm()

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        if self._header_count > MAX_HEADERS:
            self._refusal = (431, f"more than {MAX_HEADERS} request headers")
            raise httptools.HttpParserError(self._refusal[1])  # stops the parser here
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        self._in_head, self._head_bytes, self._ended = True, 0, True
        super().on_message_complete()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.read_timeout_s, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        log.warning(
            "closed a connection from %s: its request did not arrive within %g s "
            "(TENURE_READ_TIMEOUT)",
            self.client[0] if self.client else "?",
            self.read_timeout_s,
        )
        if self.cycle is None or not self.cycle.response_started:
            self._refuse(408, f"request not received within {self.read_timeout_s:g} s")
        else:
            self.transport.close()

    def _refuse(self, status: int, message: str) -> None:
        """Answer `status` with `message` and close, unless a response is already under way."""
        self._disarm()
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True  # the app's receive() sees the client gone
            self.cycle.message_event.set()
        if self.cycle is None or not self.cycle.response_started:
            body = message.encode()
            reason = {400: b"Bad Request", 408: b"Request Timeout"}.get(
                status, b"Request Header Fields Too Large"
            )
            self.transport.write(
                b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\n"
                b"content-length: %d\r\nconnection: close\r\n\r\n%s"
                % (status, reason, len(body), body)
            )
        self.transport.close()


def limited_protocol(max_header_bytes: int, read_timeout_s: float) -> type[LimitedHttpProtocol]:
    """The protocol class with these limits (uvicorn takes a class, not an instance)."""
    return type(
        "LimitedHttpProtocol",
        (LimitedHttpProtocol,),
        {"max_header_bytes": max_header_bytes, "read_timeout_s": read_timeout_s},
    )
