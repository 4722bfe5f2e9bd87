"""`/api/openapi.json` describes every API route the server mounts, whichever package defines it."""

from __future__ import annotations

from collections.abc import Callable

from tests.proxy.ui.conftest import UI


def test_openapi_lists_every_api_endpoint(ui: UI) -> None:
    doc = ui.client.get("/api/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    paths = doc["paths"]
    expected = {
        "/api/beliefs": {"get", "post"},
        "/api/beliefs/{belief_id}": {"get", "patch", "delete"},
        "/api/beliefs/{belief_id}/chain": {"get"},
        "/api/beliefs/{belief_id}/history": {"get"},
        "/api/beliefs/{belief_id}/injections": {"get"},
        "/api/beliefs/{belief_id}/review": {"post"},
        "/api/beliefs/{belief_id}/restore": {"post"},
        "/api/injections": {"get"},
        "/api/jobs": {"get"},
        "/api/jobs/{job_id}/retry": {"post"},
        "/api/conflicts": {"get"},
        "/api/conflicts/{conflict_id}/resolve": {"post"},
        "/api/facets": {"get"},
        "/api/rules": {"get", "post"},
        "/api/rules/{rule_id}": {"patch", "delete"},
        "/api/recall": {"get"},
        "/api/prompts/preview": {"get"},
        "/api/openapi.json": {"get"},
        "/healthz": {"get"},
    }
    for path, methods in expected.items():
        assert methods <= set(paths[path]), path
    assert not any("{rest" in p for p in paths)
    listing = paths["/api/beliefs"]["get"]
    assert {"q", "prefix", "user", "scope", "pinned"} <= {p["name"] for p in listing["parameters"]}
    patch = paths["/api/beliefs/{belief_id}"]["patch"]
    schema = patch["requestBody"]["content"]["application/json"]["schema"]
    assert "aliases" in schema["properties"] and "id" not in schema["properties"]
    assert schema["properties"]["expires_in_days"]["type"] == ["number", "null"]
    preview = paths["/api/prompts/preview"]["get"]
    assert {"user", "scope", "agent", "model", "query"} == {
        p["name"] for p in preview["parameters"]
    }
    assert "Belief" in doc["components"]["schemas"]


def test_the_api_tab_is_a_page_not_raw_json(ui: UI) -> None:
    beliefs = ui.client.get("/beliefs").text
    assert 'href="/api-reference"' in beliefs and 'href="/api/openapi.json"' not in beliefs
    page = ui.client.get("/api-reference")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "<code>PATCH /api/beliefs/{belief_id}</code>" in page.text
    assert 'href="/api/openapi.json"' in page.text  # the raw document, one link away


def test_the_api_page_asks_for_the_access_key_like_every_page(make_ui: Callable[..., UI]) -> None:
    ui = make_ui(api_key="sk-local-secret")
    resp = ui.client.get("/api-reference", follow_redirects=False)
    assert resp.status_code == 303 and resp.headers["location"].startswith("/login")
