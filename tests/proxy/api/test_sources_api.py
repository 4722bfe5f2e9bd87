"""`/api/sources`: upload (JSON and multipart), list, one source with its passages, soft delete
with undo, purge; bad input answered with the field at fault."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from tests.beliefs.documents.suite import CORPUS
from tests.proxy.conftest import Gateway

DEPLOY = (CORPUS / "runbooks" / "deploy.md").read_text(encoding="utf-8")


def test_upload_list_read_delete_restore_and_purge(make_gateway: Callable[..., Gateway]) -> None:
    gateway = make_gateway()
    api = f"{gateway.url}/api/sources"
    body = {"scope": "docs:runbooks", "files": [{"path": "deploy.md", "text": DEPLOY}]}
    answer = httpx.post(api, json=body)
    assert answer.status_code == 201
    assert answer.json()["files"] == [
        {"path": "deploy.md", "status": "new", "kept": 0, "added": 4, "changed": 0, "removed": 0}
    ]
    assert httpx.post(api, json=body).json()["written"] == 0

    multipart = httpx.post(
        api,
        data={"scope": "docs:runbooks"},
        files={"files": ("oncall.txt", b"On-call rotation\n\nMondays at ten.\n", "text/plain")},
    )
    assert multipart.status_code == 201 and multipart.json()["files"][0]["added"] == 1

    listed = httpx.get(api, params={"scope": "docs:runbooks"}).json()
    assert [s["path"] for s in listed] == ["deploy.md", "oncall.txt"]
    deploy = listed[0]
    one = httpx.get(f"{api}/{deploy['id']}").json()
    assert [p["where"] for p in one["passages_live"]][
        1
    ] == "deploy.md › Deploying the API › Canary analysis"

    deleted = httpx.delete(f"{api}/{deploy['id']}").json()
    assert deleted["deleted_at"] and deleted["undo_until"]
    assert httpx.get(f"{api}/{deploy['id']}").json()["passages_live"] == []
    assert httpx.post(f"{api}/{deploy['id']}/restore").json()["deleted_at"] is None
    assert len(httpx.get(f"{api}/{deploy['id']}").json()["passages_live"]) == 4

    httpx.delete(f"{api}/{deploy['id']}")
    assert httpx.post(f"{api}/purge", json={}).json() == {"purged": []}  # within the grace
    assert httpx.post(f"{api}/purge", json={"ids": [deploy["id"]]}).json() == {
        "purged": [deploy["id"]]
    }
    assert httpx.get(f"{api}/{deploy['id']}").status_code == 404
    rows = gateway.rows("SELECT count(*) FROM beliefs WHERE provenance->>'file' = 'deploy.md'")
    assert rows[0][0] == 0


def test_bad_uploads_name_the_field(make_gateway: Callable[..., Gateway]) -> None:
    gateway = make_gateway()
    api = f"{gateway.url}/api/sources"
    cases = [
        ({"files": []}, "scope"),
        ({"scope": "docs:x", "files": "deploy.md"}, "files"),
        ({"scope": "docs:x", "files": [{"path": "a.pdf", "text": "x"}]}, "files"),
        ({"scope": "project:billing", "files": [{"path": "a.md", "text": "x"}]}, "scope"),
        ({"scope": "docs:x", "files": [], "present": "a.md"}, "present"),
    ]
    for body, field in cases:
        answer = httpx.post(api, json=body)
        assert answer.status_code == 400, (body, answer.text)
        assert answer.json()["error"]["field"] == field, answer.json()
