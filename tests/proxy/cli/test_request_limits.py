"""`tenure serve` bounds what one connection can hold: the request head's size and header
count (431), and the time a request may take to arrive (408), on a real server process."""

from __future__ import annotations

import contextlib
import json
import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fakes.upstream import FakeUpstream
from tests.proxy.cli.test_cli_server import start_tenure, stop_tenure

HEAD_LIMIT = 8192
READ_TIMEOUT_S = 1.0
GIVE_UP_S = 60  # only a server that never cuts the connection waits this long


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory, upstream_server: FakeUpstream) -> Iterator[int]:
    home: Path = tmp_path_factory.mktemp("home")
    process, port = start_tenure(
        home,
        upstream_server.url,
        TENURE_MAX_HEADER_BYTES=str(HEAD_LIMIT),
        TENURE_READ_TIMEOUT=str(READ_TIMEOUT_S),
    )
    yield port
    stop_tenure(process)


def answer_to(port: int, request: bytes) -> bytes:
    """Send `request` whole (as far as the server reads it) and read until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=GIVE_UP_S) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(request)  # cut off mid-way, its answer may still be waiting
        out = b""
        with contextlib.suppress(ConnectionResetError):
            while data := sock.recv(65536):
                out += data
        return out


def test_an_oversized_header_is_refused(port: int) -> None:
    big = b"x" * (HEAD_LIMIT * 64)  # 512 KiB in one header
    request = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: " + big + b"\r\n\r\n"
    answer = answer_to(port, request)
    assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
    assert b"TENURE_MAX_HEADER_BYTES" in answer


def test_too_many_headers_are_refused(port: int) -> None:
    request = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n" + b"a: 1\r\n" * 300 + b"\r\n"
    assert len(request) < HEAD_LIMIT  # refused for the count, not the size
    answer = answer_to(port, request)
    assert answer.startswith(b"HTTP/1.1 431"), answer[:200]


def test_a_trickling_request_is_cut(port: int) -> None:
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nX-Slow: "
    began = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=GIVE_UP_S) as sock:
        sock.sendall(head)
        answer = b""
        # One byte at a time, each sent only when the server has said nothing for a while:
        # the server's deadline, not this loop, ends the request.
        while time.monotonic() - began < GIVE_UP_S:
            readable, _, _ = select.select([sock], [], [], READ_TIMEOUT_S / 4)
            if readable:
                answer = sock.recv(65536)
                break
            try:
                sock.sendall(b"a")
            except (BrokenPipeError, ConnectionResetError):
                break
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]


def test_a_connection_that_sends_nothing_is_closed(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=GIVE_UP_S) as sock:
        assert sock.recv(65536).startswith(b"HTTP/1.1 408")


def test_ordinary_requests_still_pass(port: int, upstream: FakeUpstream) -> None:
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        health = client.get("/healthz", headers={"X-Note": "n" * 1000})
        chat = client.post(
            "/v1/chat/completions",
            json={"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
        )
        again = client.get("/healthz")  # the same kept-alive connection
    assert health.status_code in (200, 503) and chat.status_code == 200
    assert again.status_code == health.status_code


def test_a_request_read_whole_at_once_is_not_counted_as_its_head(port: int) -> None:
    # Claude Code's requests run past 64 KiB; on loopback head and body come in one read, and
    # the body must not count toward the head's limit once the request is complete.
    body = json.dumps(
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "x" * HEAD_LIMIT * 4}]}
    ).encode()
    head = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    )
    answer = answer_to(port, head + body)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
