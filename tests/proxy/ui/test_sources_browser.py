"""The Sources page in headless Chromium: upload a document into a docs scope, open it to see
its passages, delete it and undo, checking the store and the delivery after each step."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from beliefs.context.assembly import ContextRequest, covering
from beliefs.documents import MIGRATIONS, DocumentFile, finder_for, ingest
from beliefs.opening import open_store
from proxy.settings import Settings
from tests.beliefs.documents.suite import CORPUS
from tests.proxy.conftest import Gateway
from tests.proxy.ui.test_browser import ARGS, ARTIFACTS, CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium (apt-get install chromium)"
    ),
]
SCOPE = "domain:docs/runbooks"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Gateway]:
    settings = Settings.load(
        environ={"TENURE_HOME": str(tmp_path / "home")},
        upstream_url="http://127.0.0.1:9",
        extract_workers=0,
    )
    settings.home.mkdir(parents=True)
    store = open_store(settings.db_path)
    store.ensure_schema(MIGRATIONS)
    text = (CORPUS / "runbooks" / "database.md").read_text(encoding="utf-8")
    doc = DocumentFile("database.md", text, "markdown", len(text))
    ingest(store, "default", "docs:runbooks", [doc], root="seed")
    gateway = Gateway(settings, store)
    try:
        yield gateway
    finally:
        gateway.stop()
        store.close()


def delivered(server: Gateway, query: str) -> list[str]:
    request = ContextRequest(user_id="default", scopes=(SCOPE,), query=query)
    found = server.on_store(
        lambda s: finder_for(s).for_turn(request, lambda b: True, covering((SCOPE,)))
    )
    return [str(h.belief.provenance["file"]) for h in found]


def test_upload_browse_delete_and_undo(server: Gateway, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    upload = tmp_path / "cache.html"
    upload.write_text((CORPUS / "runbooks" / "cache.html").read_text(encoding="utf-8"))
    with sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=str(CHROMIUM),
            args=ARGS,
            headless=True,
            viewport={"width": 1280, "height": 900},
        )
        try:
            page = browser.new_page()
            problems: list[str] = []
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))

            page.goto(server.url + "/sources")
            row = page.locator("tr", has_text="database.md")
            expect(row).to_contain_text("5")  # passages
            expect(row).to_contain_text("1013 bytes")

            page.locator("summary", has_text="Upload documents").click()
            page.fill("input[name=scope]", "docs:runbooks")
            page.set_input_files("input[name=files]", str(upload))
            page.locator("button", has_text="Ingest").click()
            expect(page.locator(".notice")).to_contain_text("Uploaded")
            expect(page.locator("tr", has_text="cache.html")).to_be_visible()
            assert delivered(server, "What is the redis eviction policy?") == ["cache.html"]

            page.locator("a", has_text="database.md").click()
            expect(page.locator("h1")).to_contain_text("database.md")
            expect(page.locator("ol.passages li")).to_have_count(5)
            expect(page.locator("ol.passages")).to_contain_text("patronictl failover")
            page.screenshot(path=str(ARTIFACTS / "source.png"), full_page=True)

            page.locator("button", has_text="Delete").click()
            expect(page.locator(".notice.undo")).to_contain_text("database.md is deleted")
            expect(page.locator("tr", has_text="database.md")).to_have_class("deleted")
            assert delivered(server, "How do we fail over the postgres primary?") == []
            page.screenshot(path=str(ARTIFACTS / "sources.png"), full_page=True)

            page.locator(".notice.undo button", has_text="Undo").click()
            expect(page.locator(".notice")).to_contain_text("Source restored")
            expect(page.locator("tr", has_text="database.md")).not_to_have_class("deleted")
            assert delivered(server, "How do we fail over the postgres primary?") == ["database.md"]
            assert problems == []
        finally:
            browser.close()
