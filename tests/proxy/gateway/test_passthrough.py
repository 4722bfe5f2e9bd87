"""Every other path goes to the upstream untouched: models, embeddings, anything else."""

from __future__ import annotations

import socket
from collections.abc import Callable

import httpx
import pytest

from tests.fakes.raw_upstream import RawUpstream
from tests.fakes.upstream import FakeUpstream, Raw
from tests.proxy.conftest import Gateway, no_request_to


def test_models_and_embeddings_through_the_sdk(gateway: Gateway, upstream: FakeUpstream) -> None:
    sdk = gateway.openai()
    assert [m.id for m in sdk.models.list()] == ["stand-in-model", "gpt-4o-mini"]
    assert upstream.last().headers["authorization"] == "Bearer sk-client"
    vectors = sdk.embeddings.create(model="embed", input=["a", "b"])
    assert [len(d.embedding) for d in vectors.data] == [3, 3]
    assert upstream.last().json["input"] == ["a", "b"]


def test_any_path_method_and_query_string_pass_through(
    gateway: Gateway, upstream: FakeUpstream
) -> None:
    upstream.queue(
        Raw(
            status=201,
            body=b'{"id": "resp_1"}',
            headers={"Content-Type": "application/json", "X-Vendor": "v"},
        )
    )
    resp = httpx.post(
        gateway.v1 + "/batches?stream=false&x=1",
        content=b'{"input": "hi"}',
        headers={"content-type": "application/json", "X-Tenure-User": "alice"},
    )
    assert (resp.status_code, resp.content) == (201, b'{"id": "resp_1"}')
    assert resp.headers["x-vendor"] == "v"
    rec = upstream.last()
    assert (rec.method, rec.path, rec.body) == (
        "POST",
        "/v1/batches?stream=false&x=1",
        b'{"input": "hi"}',
    )
    assert "x-tenure-user" not in rec.headers
    resp = httpx.delete(gateway.url + "/files/file-1")  # no /v1 prefix
    assert resp.status_code == 200
    assert (upstream.last().method, upstream.last().path) == ("DELETE", "/v1/files/file-1")
    raw = httpx.get(gateway.url + "/models")
    assert raw.content == bytes(upstream.last().sent)
    httpx.get(gateway.v1 + "/files/dir%2Fname%20one/content?q=a%26b")
    assert upstream.last().path == "/v1/files/dir%2Fname%20one/content?q=a%26b"


def test_models_list_adds_routed_models(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(models={"claude-via-litellm": {"litellm_model": "anthropic/claude-sonnet-4"}})
    ids = [m["id"] for m in httpx.get(gw.v1 + "/models").json()["data"]]
    assert ids == ["stand-in-model", "gpt-4o-mini", "claude-via-litellm"]


def raw_request(gw: Gateway, *requests: bytes) -> list[bytes]:
    """Send each request's exact bytes on one connection to the gateway; the answer to each
    (the last request should say `Connection: close`; its answer runs to the close)."""
    host, port = gw.url.removeprefix("http://").split(":")
    answers = []
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        for i, request in enumerate(requests):
            sock.sendall(request)
            out = b""
            while data := sock.recv(65536):
                out += data
                if i < len(requests) - 1 and b"\r\n\r\n" in out:
                    break  # a bodiless answer's head: send the next request
            answers.append(out)
    return answers


def test_dot_segments_are_refused_before_the_upstream(
    gateway: Gateway, upstream: FakeUpstream
) -> None:
    with no_request_to(upstream):
        for path in (b"/v1/../../admin", b"/v1/files/./x", b"/scope/s/v1/a/../../b"):
            request = b"GET " + path + b" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
            (answer,) = raw_request(gateway, request)
            assert answer.startswith(b"HTTP/1.1 400"), answer
            assert b"invalid_path" in answer and b"'..' segment" in answer


def test_trace_and_connect_are_not_forwarded(gateway: Gateway, upstream: FakeUpstream) -> None:
    with no_request_to(upstream):
        for method in (b"TRACE", b"CONNECT"):
            request = (
                method + b" /v1/models HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
            )
            (answer,) = raw_request(gateway, request)
            assert answer.startswith(b"HTTP/1.1 405"), answer
            assert b"is not forwarded" in answer


def test_headers_named_by_connection_stay_on_their_hop(
    make_gateway: Callable[..., Gateway],
) -> None:
    reply = (
        b"HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Upstream-Hop\r\n"
        b"X-Upstream-Hop: secret\r\nX-Vendor: v\r\nContent-Length: 2\r\n\r\nok"
    )
    with RawUpstream(reply) as raw:
        gw = make_gateway(upstream_url=raw.url)
        (answer,) = raw_request(
            gw,
            b"GET /v1/models HTTP/1.1\r\nHost: localhost\r\nConnection: close, X-Client-Hop\r\n"
            b"X-Client-Hop: 1\r\nX-Other: 2\r\n\r\n",
        )
    sent = raw.requests[0][0].lower()
    assert b"x-client-hop" not in sent and b"x-other: 2" in sent
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"x-upstream-hop" not in head.lower() and b"x-vendor: v" in head.lower()
    assert body == b"ok"


def test_accept_encoding_merges_lines_and_keeps_what_the_gateway_can_read(
    make_gateway: Callable[..., Gateway],
) -> None:
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    with RawUpstream(ok, ok) as raw:
        gw = make_gateway(upstream_url=raw.url)
        for lines in (
            b"Accept-Encoding: br\r\nAccept-Encoding: gzip\r\n",
            b"Accept-Encoding: br\r\n",
        ):
            raw_request(
                gw,
                b"GET /v1/models HTTP/1.1\r\nHost: localhost\r\n"
                + lines
                + b"Connection: close\r\n\r\n",
            )
    sent = [head.lower() for head, _ in raw.requests]
    assert b"accept-encoding: gzip\r\n" in sent[0] + b"\r\n"
    assert b"accept-encoding: identity\r\n" in sent[1] + b"\r\n"


def test_a_304_with_a_length_leaves_the_client_connection_usable(
    make_gateway: Callable[..., Gateway],
) -> None:
    not_modified = b'HTTP/1.1 304 Not Modified\r\nContent-Length: 1234\r\nETag: "a"\r\n\r\n'
    with RawUpstream(not_modified, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") as raw:
        gw = make_gateway(upstream_url=raw.url)
        first, second = raw_request(
            gw,
            b'GET /v1/files/a HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: "a"\r\n\r\n',
            b"GET /v1/files/a HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        )
    assert first.startswith(b"HTTP/1.1 304") and b'etag: "a"' in first.lower()
    assert second.startswith(b"HTTP/1.1 200") and second.endswith(b"\r\n\r\nok")


def test_a_passthrough_reply_cut_short_is_cut_for_the_client_and_counted(
    make_gateway: Callable[..., Gateway],
) -> None:
    def cut(sock: socket.socket) -> None:
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
        sock.shutdown(socket.SHUT_RDWR)

    with RawUpstream(cut) as raw:
        gw = make_gateway(upstream_url=raw.url)
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.get(gw.v1 + "/files/a")
        gw.settle(lambda: gw.runtime.counters.upstream_broken_streams == 1)
    assert gw.runtime.counters.upstream_broken_streams == 1
