"""TENURE_API_KEY: the access key, and the refusal to listen beyond loopback without it."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from proxy.cli.main import main
from proxy.cli.server import check_bind, is_loopback
from proxy.security.access import FailedAttempts
from proxy.settings import SettingsError
from tests.fakes.upstream import FakeUpstream
from tests.proxy.conftest import Gateway, no_request_to

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def test_access_key_required_and_client_credentials_not_forwarded(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(api_key="gateway-secret", upstream_api_key="sk-upstream")
    with no_request_to(upstream):
        resp = httpx.post(gw.v1 + "/chat/completions", json=BODY)
        assert resp.status_code == 401
        assert resp.json()["error"]["type"] == "authentication_error"
        assert resp.headers["x-tenure-request-id"].startswith("req_")
        wrong = {"Authorization": "Bearer nope"}
        assert httpx.post(gw.v1 + "/chat/completions", json=BODY, headers=wrong).status_code == 401
        assert httpx.get(gw.url + "/api/beliefs").status_code == 401
        assert httpx.get(gw.url + "/scope/domain:code/v1/models").status_code == 401
    assert httpx.get(gw.url + "/healthz").status_code == 200

    sdk = gw.openai("gateway-secret")
    sdk.chat.completions.create(**BODY)  # type: ignore[call-overload]
    assert upstream.last().headers["authorization"] == "Bearer sk-upstream"
    api = httpx.get(gw.url + "/api/beliefs", headers={"Authorization": "Bearer gateway-secret"})
    assert api.status_code == 200

    claude = gw.anthropic("gateway-secret")
    claude.messages.create(
        model="claude", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
    )
    headers = upstream.last("/messages").headers
    assert headers["x-api-key"] == "sk-upstream" and "authorization" not in headers


def test_access_key_without_upstream_key_forwards_no_credentials(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(api_key="gateway-secret")
    headers = {"Authorization": "Bearer gateway-secret"}
    assert httpx.post(gw.v1 + "/chat/completions", json=BODY, headers=headers).status_code == 200
    assert "authorization" not in upstream.last().headers


def test_wrong_keys_from_one_address_are_refused_for_a_while(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(api_key="gateway-secret")
    right = {"Authorization": "Bearer gateway-secret"}
    for _ in range(12):  # no key at all is not a guess at it
        assert httpx.get(gw.url + "/api/beliefs").status_code == 401
    assert httpx.get(gw.url + "/api/beliefs", headers=right).status_code == 200
    for _ in range(10):
        wrong = {"Authorization": "Bearer nope"}
        assert httpx.get(gw.url + "/api/beliefs", headers=wrong).status_code == 401
    with no_request_to(upstream):
        resp = httpx.post(gw.v1 + "/chat/completions", json=BODY, headers=right)
    assert resp.status_code == 429 and 1 <= int(resp.headers["retry-after"]) <= 60
    assert resp.json()["error"]["code"] == "too_many_failed_logins"
    assert "try again in" in resp.json()["error"]["message"]
    api = httpx.get(gw.url + "/api/beliefs", headers={"x-api-key": "gateway-secret"})
    assert api.status_code == 429 and api.json()["error"]["type"] == "rate_limit_error"
    assert httpx.get(gw.url + "/healthz").status_code == 200  # open paths stay open


def test_failed_attempts_expire_per_address_and_stay_bounded() -> None:
    now = [1000.0]
    failures = FailedAttempts(limit=3, window_s=10, clock=lambda: now[0], max_clients=2)
    for _ in range(3):
        assert failures.retry_after("10.0.0.1") is None
        failures.failed("10.0.0.1")
    assert failures.retry_after("10.0.0.1") == 10
    assert failures.retry_after("10.0.0.2") is None  # other addresses are not affected
    now[0] += 4
    assert failures.retry_after("10.0.0.1") == 6
    now[0] += 6.5
    assert failures.retry_after("10.0.0.1") is None  # the window has passed
    for address in ("10.0.0.3", "10.0.0.4", "10.0.0.5"):
        failures.failed(address)
    assert len(failures._failures) == 2


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)
    check_bind(host, None)


def test_non_loopback_refused_without_key(
    capsys: pytest.CaptureFixture[str], tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not is_loopback("0.0.0.0")
    with pytest.raises(SettingsError, match="TENURE_API_KEY"):
        check_bind("0.0.0.0", None)
    check_bind("0.0.0.0", "secret")
    monkeypatch.setenv("TENURE_HOME", str(tmp_path))
    monkeypatch.delenv("TENURE_API_KEY", raising=False)
    assert main(["serve", "--host", "0.0.0.0", "--port", "5999"]) == 1
    err = capsys.readouterr().err
    assert "refusing to listen on 0.0.0.0" in err and "Traceback" not in err
