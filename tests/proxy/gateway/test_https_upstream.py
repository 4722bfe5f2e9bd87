"""An https upstream (the default is one): verified TLS, streaming and memory through the proxy."""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterator

import httpx
import pytest

from proxy.gateway.upstream_pool import UpstreamPool
from tests.fakes.upstream import TLS_DIR, FakeUpstream, tls_context
from tests.proxy import beliefs_seed as seed
from tests.proxy.conftest import Gateway

ALICE = {"X-Tenure-User": seed.USER, "X-Tenure-Scope": "domain:code"}
QUESTION = "Which pg version do we run?"


@pytest.fixture
def secure() -> Iterator[FakeUpstream]:
    with FakeUpstream(tls=tls_context()) as server:
        yield server


def test_an_https_upstream_streams_through_the_proxy_with_memory(
    secure: FakeUpstream, make_gateway: Callable[..., Gateway]
) -> None:
    trusting = ssl.create_default_context(cafile=str(TLS_DIR / "cert.pem"))
    pool = UpstreamPool(connect_timeout=5, read_timeout=30, ssl_context=trusting)
    gw = make_gateway(beliefs=seed.ALL, persona=seed.PERSONA, upstream_url=secure.url, pool=pool)
    for _ in range(2):  # the second request rides the kept TLS connection
        stream = gw.openai().chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": QUESTION}],
            stream=True,
            extra_headers=ALICE,
        )
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        assert text == "Hello from the stand-in provider."
    last = secure.last("/chat/completions").json["messages"][-1]["content"]
    assert last.startswith(QUESTION + "\n\n<tenure-memory") and "b-postgres" in last
    models = httpx.get(gw.v1 + "/models", headers=ALICE)
    assert models.status_code == 200 and bytes(secure.last("/models").sent) == models.content


def test_an_https_upstream_with_an_untrusted_certificate_is_a_clear_502(
    secure: FakeUpstream, make_gateway: Callable[..., Gateway]
) -> None:
    gw = make_gateway(upstream_url=secure.url)  # the system's CAs do not know this cert
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    resp = httpx.post(gw.v1 + "/chat/completions", json=body)
    assert resp.status_code == 502
    error = resp.json()["error"]
    assert error["code"] == "upstream_unreachable"
    assert "CERTIFICATE_VERIFY_FAILED" in error["message"] and secure.url in error["message"]
    assert secure.requests == []
