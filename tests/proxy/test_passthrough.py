"""Every other path goes to the upstream untouched: models, embeddings, anything else."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from tests.fakes.upstream import FakeUpstream, Raw
from tests.proxy.conftest import Gateway


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
        gateway.v1 + "/responses?stream=false&x=1",
        content=b'{"input": "hi"}',
        headers={"content-type": "application/json", "X-Tenure-User": "alice"},
    )
    assert (resp.status_code, resp.content) == (201, b'{"id": "resp_1"}')
    assert resp.headers["x-vendor"] == "v"
    rec = upstream.last()
    assert (rec.method, rec.path, rec.body) == (
        "POST",
        "/v1/responses?stream=false&x=1",
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
