"""Bad input to the JSON API and the UI: a clear 4xx naming the value, nothing changed,
nothing sent to the provider (the CLI's own checks are in test_cli_store)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from beliefs.model.models import Belief
from tests.fakes.upstream import FakeUpstream
from tests.proxy.conftest import Gateway, no_request_to


@pytest.mark.parametrize(
    ("method", "path", "status", "allowed"),
    [
        ("PUT", "/api/beliefs", 405, "GET or POST"),
        ("POST", "/api/beliefs/b-x", 405, "DELETE or GET or PATCH"),
        ("DELETE", "/api/rules", 405, "GET or POST"),
        ("OPTIONS", "/api/beliefs", 405, "GET or POST"),
        ("POST", "/api/nope", 404, None),
    ],
)
def test_a_wrong_method_on_the_api_is_answered_here_not_upstream(
    gateway: Gateway,
    upstream: FakeUpstream,
    method: str,
    path: str,
    status: int,
    allowed: str | None,
) -> None:
    with no_request_to(upstream):
        resp = httpx.request(
            method,
            gateway.url + path,
            json={"secret": "memory"},
            headers={"Authorization": "Bearer k"},
        )
    assert resp.status_code == status, resp.text
    message = resp.json()["error"]["message"]
    assert method in message and path in message
    if allowed:
        assert allowed in message


def test_a_wrong_method_on_a_ui_page_is_not_sent_upstream(
    gateway: Gateway, upstream: FakeUpstream
) -> None:
    with no_request_to(upstream):
        assert httpx.put(gateway.url + "/beliefs", content=b"x").status_code == 405
        assert httpx.delete(gateway.url + "/healthz").status_code == 405


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/api/beliefs?limit=\u00b2", "limit"),
        ("/api/beliefs?offset=\u00b2", "offset"),
        ("/api/beliefs?limit=99999999999999999999999", "limit"),
        ("/api/beliefs?offset=99999999999999999999999", "offset"),
        ("/api/beliefs?q=x&limit=\u00b2", "limit"),
        ("/api/injections?limit=\u00b2", "limit"),
        ("/api/recall?query=x&limit=\u00b2", "limit"),
        ("/api/recall?query=x&limit=201", "limit"),
        ("/api/jobs?limit=\u00b2", "limit"),
        ("/api/jobs?limit=", "limit"),
        ("/api/compaction/runs?limit=\u00b2", "limit"),
    ],
)
def test_numbers_that_are_not_plain_digits_in_range_are_400(
    gateway: Gateway, path: str, field: str
) -> None:
    resp = httpx.get(gateway.url + path)
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"]["field"] == field


@pytest.mark.parametrize(
    ("method", "path", "raw", "field"),
    [
        ("POST", "/api/beliefs", b'{"canonical_name":"s","content":"\\ud800"}', "content"),
        ("POST", "/api/beliefs", b'{"canonical_name":"s","aliases":["\\udc00"]}', "aliases"),
        ("PUT", "/api/persona?user=u", b'{"text":"\\ud800"}', "text"),
    ],
)
def test_a_lone_surrogate_is_400_and_nothing_is_written(
    gateway: Gateway, method: str, path: str, raw: bytes, field: str
) -> None:
    resp = httpx.request(
        method, gateway.url + path, content=raw, headers={"content-type": "application/json"}
    )
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"]["field"] == field
    assert httpx.get(gateway.url + "/api/beliefs").json() == []


def test_persona_user_over_the_limit_is_400(gateway: Gateway) -> None:
    resp = httpx.put(gateway.url + "/api/persona", params={"user": "u" * 300}, json={"text": "hi"})
    assert resp.status_code == 400 and resp.json()["error"]["field"] == "user"


def test_an_unknown_compaction_field_is_refused_before_anything_merges(
    make_gateway: Callable[..., Gateway],
) -> None:
    twins = [
        Belief(
            id=f"b-{name}",
            user_id="default",
            canonical_name=name,
            content="We deploy on Kubernetes.",
            scope=["domain:code"],
        )
        for name in ("k8s_cluster", "kube_cluster")
    ]
    gw = make_gateway(beliefs=twins)
    resp = httpx.post(gw.url + "/api/compaction/run", json={"dryrun": True}, timeout=30)
    assert resp.status_code == 400 and resp.json()["error"]["field"] == "dryrun"
    assert "dry_run" in resp.json()["error"]["message"]
    live = httpx.get(gw.url + "/api/beliefs").json()
    assert {b["id"] for b in live} == {"b-k8s_cluster", "b-kube_cluster"}
    persona = httpx.put(gw.url + "/api/persona", json={"text": "ok", "txt": 1})
    assert persona.status_code == 400 and persona.json()["error"]["field"] == "txt"


def test_the_deleted_notice_cannot_reach_another_endpoint(
    make_gateway: Callable[..., Gateway],
) -> None:
    gw = make_gateway(beliefs=[Belief(id="b-a", user_id="default", canonical_name="a")])
    for value in ("b-a/history", "b-a/chain", "b-a?x=1"):
        resp = httpx.get(gw.url + "/beliefs", params={"deleted": value})
        assert resp.status_code == 200, resp.text
        assert "Undo" not in resp.text


def test_canonical_names_keep_letters_of_every_script(gateway: Gateway) -> None:
    names = []
    for name in ("Café", "Tokyo 日本", "Tokyo 中国", "é日本"):
        resp = httpx.post(gateway.url + "/api/beliefs", json={"canonical_name": name})
        assert resp.status_code == 201, resp.text
        names.append(resp.json()["canonical_name"])
    assert names == ["café", "tokyo_日本", "tokyo_中国", "é日本"]


def test_the_status_of_a_superseded_belief_names_the_field(
    make_gateway: Callable[..., Gateway],
) -> None:
    gw = make_gateway(
        beliefs=[Belief(id="b-old", user_id="default", canonical_name="db", content="MySQL")]
    )
    new = Belief(id="b-new", user_id="default", canonical_name="db", content="Postgres")
    gw.on_store(lambda store: store.supersede("b-old", new))
    resp = httpx.patch(gw.url + "/api/beliefs/b-old", json={"epistemic_status": "active"})
    assert resp.status_code == 400
    assert resp.json()["error"]["field"] == "epistemic_status"
    assert httpx.get(gw.url + "/api/beliefs/b-old").json()["epistemic_status"] == "superseded"
