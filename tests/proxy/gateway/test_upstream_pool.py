"""The pooled upstream client against real sockets: a scripted raw HTTP server per test."""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import pytest
import uvloop

from proxy.gateway.upstream_pool import UpstreamPool
from proxy.gateway.upstream_target import (
    UpstreamBroken,
    UpstreamTimeout,
    UpstreamUnreachable,
    target_of,
)
from tests.fakes.upstream import TLS_DIR, tls_context

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class RawServer:
    """A TCP server on 127.0.0.1 answering each connection with `handler`; it records the
    request heads it read and how many connections it accepted."""

    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.tls = tls
        self.connections = 0
        self.heads: list[bytes] = []
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> RawServer:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    @property
    def url(self) -> str:
        assert self.server is not None
        port = self.server.sockets[0].getsockname()[1]
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def read_request(self, reader: asyncio.StreamReader) -> bytes:
        head = await reader.readuntil(b"\r\n\r\n")
        self.heads.append(head)
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                await reader.readexactly(int(line.split(b":")[1]))
        return head


def run(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """On asyncio's own loop (the tests' gateways) and on uvloop (`tenure serve`)."""
    asyncio.run(main())
    uvloop.run(main())


def pool(**timeouts: float) -> UpstreamPool:
    return UpstreamPool(
        connect_timeout=timeouts.get("connect", 2.0), read_timeout=timeouts.get("read", 2.0)
    )


JSON_REPLY = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n"


def test_keep_alive_reuses_one_connection_and_sends_host_and_length() -> None:
    async def main() -> None:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while True:
                await server.read_request(reader)
                writer.write(JSON_REPLY + b'{"ok":true}')

        async with RawServer(handler) as server:
            authority = server.url.removeprefix("http://")
            client = pool()
            for _ in range(3):
                resp = await client.request(
                    "POST", server.url + "/v1/chat/completions", [("x-a", "1")], b"{}"
                )
                async with resp:
                    assert resp.status == 200 and await resp.read() == b'{"ok":true}'
                    assert resp.headers["content-type"] == "application/json"
            resp.close()  # late, after release: must not touch the pooled connection
            async with await client.request("GET", server.url + "/v1/x", [], None) as again:
                assert await again.read() == b'{"ok":true}'
            await client.close()
        assert server.connections == 1
        head = server.heads[0].decode()
        assert head.startswith("POST /v1/chat/completions HTTP/1.1\r\n")
        assert f"Host: {authority}" in head
        assert "x-a: 1" in head and "Content-Length: 2" in head

    run(main)


def test_a_pooled_connection_the_upstream_closed_is_replaced_once() -> None:
    async def main() -> None:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_request(reader)
            writer.write(JSON_REPLY + b'{"ok":true}')
            await writer.drain()
            # then the connection is closed (idle timeout on the upstream's side)

        async with RawServer(handler) as server:
            client = pool()
            for _ in range(2):
                async with await client.request("GET", server.url + "/v1/models", [], None) as r:
                    assert await r.read() == b'{"ok":true}'
                await asyncio.sleep(0.05)
            await client.close()
        assert server.connections == 2 and len(server.heads) == 2

    run(main)


def test_chunked_and_until_close_bodies_arrive_whole() -> None:
    async def main() -> None:
        async def chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for part in (b"data: one\n\n", b"data: two\n\n"):
                writer.write(b"%x\r\n%s\r\n" % (len(part), part))
                await writer.drain()
                await asyncio.sleep(0.01)
            writer.write(b"0\r\n\r\n")

        async with RawServer(chunked) as server:
            client = pool()
            resp = await client.request("POST", server.url + "/v1/x", [], b"")
            parts = [chunk async for chunk in resp.chunks()]
            resp.release()
            assert b"".join(parts) == b"data: one\n\ndata: two\n\n" and len(parts) == 2

        async def until_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it")

        async with RawServer(until_close) as server:
            resp = await client.request("GET", server.url + "/v1/x", [], None)
            assert await resp.read() == b"all of it"
            resp.release()
            await client.close()

    run(main)


def test_a_reply_cut_short_is_broken_and_the_connection_dropped() -> None:
    async def main() -> None:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")

        async with RawServer(handler) as server:
            client = pool()
            resp = await client.request("GET", server.url + "/v1/x", [], None)
            with pytest.raises(UpstreamBroken, match="mid-reply"):
                await resp.read()
            resp.release()
            assert not client._idle.get(target_of(server.url + "/").origin)
            await client.close()

    run(main)


def test_garbage_refused_and_silent_upstreams_fail_clearly() -> None:
    async def main() -> None:
        async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_request(reader)
            writer.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")

        async with RawServer(garbage) as server:
            with pytest.raises(UpstreamBroken, match="not HTTP"):
                await pool().request("GET", server.url + "/v1/x", [], None)

        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_request(reader)
            await asyncio.sleep(5)

        async with RawServer(silent) as server:
            with pytest.raises(UpstreamTimeout, match=r"no reply within 0\.2 s"):
                await pool(read=0.2).request("GET", server.url + "/v1/x", [], None)

        closed = RawServer(garbage)
        async with closed:
            url = closed.url
        with pytest.raises(UpstreamUnreachable, match="cannot connect"):
            await pool().request("GET", url + "/v1/x", [], None)

    run(main)


def test_a_slow_body_times_out_between_chunks() -> None:
    async def main() -> None:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf!")
            await asyncio.sleep(5)

        async with RawServer(handler) as server:
            resp = await pool(read=0.2).request("GET", server.url + "/v1/x", [], None)
            with pytest.raises(UpstreamTimeout, match="no reply bytes"):
                await resp.read()
            resp.close()

    run(main)


def test_a_body_slower_in_all_than_the_read_timeout_is_read_while_each_chunk_comes_in_time() -> (
    None
):
    async def main() -> None:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n")
            for part in (b"ab", b"cd", b"ef", b"gh"):
                await asyncio.sleep(0.12)
                writer.write(part)
                await writer.drain()

        async with RawServer(handler) as server:
            resp = await pool(read=0.2).request("GET", server.url + "/v1/x", [], None)
            assert await resp.read() == b"abcdefgh"  # 0.48 s in all, no gap of 0.2 s
            resp.release()

    run(main)


def test_interim_replies_head_requests_and_odd_targets() -> None:
    async def main() -> None:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while True:
                head = await server.read_request(reader)
                if head.startswith(b"HEAD"):
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n")
                else:
                    writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" + JSON_REPLY + b'{"ok":true}')

        async with RawServer(handler) as server:
            client = pool()
            resp = await client.request("POST", server.url + "/v1/files/ä b?x=1", [], b"")
            assert resp.status == 200 and await resp.read() == b'{"ok":true}'
            resp.release()
            head = await client.request("HEAD", server.url + "/v1/files", [], None)
            assert head.status == 200 and await head.read() == b""
            head.release()
            await client.close()
        assert server.heads[0].startswith(b"POST /v1/files/%C3%A4%20b?x=1 HTTP/1.1")

    run(main)


def test_headers_that_cannot_be_sent_are_refused_before_connecting() -> None:
    async def main() -> None:
        client = pool()
        with pytest.raises(UpstreamUnreachable, match="line break"):
            await client.request("GET", "http://127.0.0.1:9/v1", [("x-a", "1\r\nx-b: 2")], None)
        with pytest.raises(UpstreamUnreachable, match="HTTP headers cannot carry"):
            await client.request("GET", "http://127.0.0.1:9/v1", [("x-a", "→")], None)
        with pytest.raises(UpstreamUnreachable, match="not an http"):
            await client.request("GET", "ftp://example.org/v1", [], None)

    run(main)


def test_cancelling_a_waiting_request_hangs_up_on_the_upstream() -> None:
    async def main() -> None:
        hung_up = asyncio.Event()

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_request(reader)
            if not await reader.read(1):  # EOF: the client closed the connection
                hung_up.set()

        async with RawServer(handler) as server:
            task = asyncio.create_task(pool().request("GET", server.url + "/v1/x", [], None))
            await asyncio.sleep(0.1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.wait_for(hung_up.wait(), 2)

    run(main)


def test_https_upstreams_are_verified_and_kept_alive() -> None:
    async def main() -> None:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while True:
                await server.read_request(reader)
                writer.write(JSON_REPLY + b'{"ok":true}')

        async with RawServer(handler, tls=tls_context()) as server:
            trusting = ssl.create_default_context(cafile=str(TLS_DIR / "cert.pem"))
            client = UpstreamPool(connect_timeout=2, read_timeout=2, ssl_context=trusting)
            for _ in range(2):
                async with await client.request("GET", server.url + "/v1/models", [], None) as r:
                    assert await r.read() == b'{"ok":true}'
            await client.close()
            assert server.connections == 1
            with pytest.raises(UpstreamUnreachable, match="CERTIFICATE_VERIFY_FAILED"):
                await pool().request("GET", server.url + "/v1/models", [], None)

    run(main)


def test_a_large_reply_is_relayed_whole_while_the_reader_lags() -> None:
    """Over the buffer limit the socket is paused, then resumed as the reader catches up."""
    payload = bytes(range(256)) * (12 * 1024)  # 3 MiB

    async def main() -> None:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(payload))
            writer.write(payload)
            await writer.drain()
            await server.read_request(reader)  # the connection is reused afterwards
            writer.write(JSON_REPLY + b'{"ok":true}')

        async with RawServer(handler) as server:
            client = pool()
            resp = await client.request("GET", server.url + "/v1/files/big", [], None)
            received = bytearray()
            async for chunk in resp.chunks():
                if not received:
                    await asyncio.sleep(0.2)  # a slow client: the rest piles up meanwhile
                received += chunk
            resp.release()
            assert bytes(received) == payload
            async with await client.request("GET", server.url + "/v1/models", [], None) as r:
                assert await r.read() == b'{"ok":true}'
            await client.close()
        assert server.connections == 1

    run(main)


def test_a_reply_ended_by_a_reset_connection_is_broken_not_whole() -> None:
    async def main() -> None:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\npartial")
            await writer.drain()
            await asyncio.sleep(0.05)
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()  # a reset, not an orderly close

        async with RawServer(handler) as server:
            client = pool()
            resp = await client.request("GET", server.url + "/v1/x", [], None)
            with pytest.raises(UpstreamBroken, match="failed mid-reply"):
                await resp.read()
            resp.close()
            await client.close()

    run(main)


def test_bytes_after_the_reply_do_not_join_it_and_the_connection_is_dropped() -> None:
    async def main() -> None:
        second = b"HTTP/1.1 500 Oops\r\nContent-Length: 9\r\n\r\n INJECTED"

        async def same_packet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_request(reader)
            writer.write(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
                + second
            )
            await reader.read()

        async def later_packet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await server.read_request(reader)
            writer.write(JSON_REPLY + b'{"ok":true}')
            await writer.drain()
            await asyncio.sleep(0.05)
            writer.write(second)
            await reader.read()

        for handler, body in ((same_packet, b"hello"), (later_packet, b'{"ok":true}')):
            async with RawServer(handler) as server:
                client = pool()
                resp = await client.request("GET", server.url + "/v1/x", [], None)
                await asyncio.sleep(0.1)  # let the surplus arrive while the reply is held
                assert await resp.read() == body
                assert resp.status == 200 and b"Oops" not in repr(resp.raw_headers).encode()
                resp.release()
                assert not client._idle.get(target_of(server.url + "/").origin)
                await client.close()

    run(main)


def test_the_pool_opens_at_most_max_connections_per_origin_and_the_rest_wait() -> None:
    async def main() -> None:
        release = asyncio.Event()

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while True:
                await server.read_request(reader)
                await release.wait()
                writer.write(JSON_REPLY + b'{"ok":true}')
                await writer.drain()

        async with RawServer(handler) as server:
            client = UpstreamPool(connect_timeout=5.0, read_timeout=5.0, max_connections=2)

            async def one() -> bytes:
                async with await client.request("GET", server.url + "/v1/models", [], None) as r:
                    return await r.read()

            calls = [asyncio.create_task(one()) for _ in range(5)]
            await asyncio.sleep(0.2)
            assert server.connections == 2 and len(server.heads) == 2  # three wait for a slot
            release.set()
            assert await asyncio.gather(*calls) == [b'{"ok":true}'] * 5
            assert server.connections == 2 and len(server.heads) == 5

            release.clear()
            busy = [asyncio.create_task(one()) for _ in range(2)]
            await asyncio.sleep(0.1)
            client.connect_timeout = 0.2  # both slots in use: a third waits that long, then 504
            with pytest.raises(UpstreamTimeout, match=r"connections to .* stayed busy"):
                await client.request("GET", server.url + "/v1/models", [], None)
            release.set()
            await asyncio.gather(*busy)
            await client.close()

    run(main)
