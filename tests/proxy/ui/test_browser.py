"""Headless Chromium against a real server: find, open, edit, pin, confirm, delete and undo,
add a rule and preview a prompt, checking each change in the store; screenshots of the list, a
belief page and the rules page are saved under tests/artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from beliefs.opening import open_store
from proxy.settings import Settings
from tests.proxy.conftest import Gateway
from tests.proxy.ui import seed

if TYPE_CHECKING:
    from playwright.sync_api import Page

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium (apt-get install chromium)"
    ),
]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Gateway]:
    settings = Settings.load(
        environ={"TENURE_HOME": str(tmp_path / "home")},
        upstream_url="http://127.0.0.1:9",
        extract_workers=0,
    )
    settings.home.mkdir(parents=True)
    store = open_store(settings.db_path)
    for belief in seed.ALL:
        store.create(belief)
    store.supersede("b-postgres", seed.POSTGRES_17, reason="billing upgrade")
    gateway = Gateway(settings, store)
    try:
        yield gateway
    finally:
        gateway.stop()
        store.close()


def test_find_edit_pin_confirm_delete_and_undo(server: Gateway, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
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
            find_and_open(page, server.url)
            edit_and_pin(page, server)
            confirm_delete_and_undo(page, server)
            add_rule_and_preview(page)
            fits_a_phone(page, server.url)
            assert problems == [], problems
        finally:
            browser.close()


def find_and_open(page: Page, base: str) -> None:
    """The list, type-ahead, search by a rejected alternative, and the decision it finds."""
    from playwright.sync_api import expect

    page.goto(base + "/beliefs")
    expect(page.locator("a.name", has_text="kubernetes")).to_be_visible()
    expect(page.locator(".belief.is-pinned")).to_have_count(1)
    expect(page.locator(".badge.pending")).to_have_count(1)
    page.screenshot(path=str(ARTIFACTS / "beliefs-list.png"), full_page=True)

    # type-ahead (the optional script) offers names as you type
    page.fill("input[name=q]", "kub")
    option = page.locator("#typeahead option").first
    expect(option).to_have_attribute("value", "kubernetes")

    # search by a rejected alternative, open the decision it finds
    page.fill("input[name=q]", "mysql")
    page.press("input[name=q]", "Enter")
    expect(page.locator("a.name")).to_have_count(1)
    page.click("a.name:has-text('postgres_17')")
    expect(page.locator("h1")).to_have_text("postgres_17")
    expect(page.locator(".timeline li")).to_have_count(2)


def edit_and_pin(page: Page, server: Gateway) -> None:
    """On the open belief's page: edit an alias, then pin it."""
    from playwright.sync_api import expect

    aliases = page.locator("input[name=aliases]")
    aliases.fill(aliases.input_value() + ", pgsql")
    page.click("form.edit button[type=submit]")
    expect(page.locator(".notice")).to_have_text("Saved.")
    assert "pgsql" in server.on_store(lambda s: s.get("b-postgres-17")).aliases

    page.click("button:has-text('Pin')")
    expect(page.locator(".badge.pin")).to_be_visible()
    assert server.on_store(lambda s: s.get("b-postgres-17")).pinned
    page.screenshot(path=str(ARTIFACTS / "belief-page.png"), full_page=True)


def confirm_delete_and_undo(page: Page, server: Gateway) -> None:
    """Confirm the agent's pending belief, delete another and undo; hostile text stays text."""
    from playwright.sync_api import expect

    base = server.url
    # confirm the agent's pending belief from the review page
    page.click("nav a:has-text('Review')")
    item = page.locator(".belief", has_text="prefers_fastify")
    item.locator("button:has-text('Confirm')").click()
    expect(page.locator(".notice")).to_have_text("Confirmed.")
    assert server.on_store(lambda s: s.get("b-guess")).review_state == "confirmed"

    # delete, then undo from the list
    page.goto(base + "/beliefs/b-tabs")
    page.click("button:has-text('Delete')")
    expect(page.locator(".notice.undo")).to_contain_text("tabs_indentation")
    assert server.on_store(lambda s: s.get("b-tabs")).deleted_at is not None
    page.click(".notice.undo button:has-text('Undo')")
    expect(page.locator(".notice")).to_have_text("Restored.")
    assert server.on_store(lambda s: s.get("b-tabs")).deleted_at is None

    # hostile text stays text
    page.goto(base + "/beliefs/b-hostile")
    expect(page.locator(".content.big")).to_contain_text("<script>alert('owned')</script>")


def add_rule_and_preview(page: Page) -> None:
    """Add a rule, then preview what a request would receive."""
    from playwright.sync_api import expect

    page.click("nav a:has-text('Rules')")
    page.click("summary:has-text('Add a rule')")
    add = page.locator("form[action='/rules']")
    add.locator("input[name=pattern]").fill("domain:code")
    add.locator("input[name=bonus]").fill("0.2")
    add.locator("textarea[name=template]").fill("(MEMORY) Code notes:\n{{content}}")
    add.locator("button[type=submit]").click()
    expect(page.locator(".notice")).to_contain_text("Rule added")
    expect(page.locator(".rule", has_text="Code notes:")).to_contain_text("+20 %")
    page.fill("#preview input[name=user]", "alice")
    page.fill("#preview input[name=scope]", "domain:code")
    page.fill("#preview textarea[name=query]", "should the new service use fastify?")
    page.click("#preview button:has-text('Preview')")
    expect(page.locator("#preview table.records")).to_contain_text("prefers_fastify")
    expect(page.locator("#preview pre.block").last).to_contain_text("Code notes:")
    page.screenshot(path=str(ARTIFACTS / "rules-page.png"), full_page=True)


def fits_a_phone(page: Page, base: str) -> None:
    """A phone-sized screen: the belief page and the rules page never scroll sideways."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(base + "/beliefs/b-k8s")
    page.screenshot(path=str(ARTIFACTS / "belief-page-phone.png"), full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways on a phone ({width}px)"
    page.goto(base + "/rules")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the rules page scrolls sideways on a phone ({width}px)"


def test_share_and_unshare_an_agents_belief(server: Gateway, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=str(CHROMIUM), args=ARGS, headless=True
        )
        try:
            page = browser.new_page()
            page.goto(server.url + "/beliefs/b-bob")
            expect(page.get_by_text("private to this agent")).to_be_visible()
            page.get_by_role("button", name="Share", exact=True).click()
            expect(page.get_by_role("status")).to_contain_text("every agent of this user")
            assert server.on_store(lambda s: s.get("b-bob").shared)
            page.get_by_role("button", name="Unshare", exact=True).click()
            expect(page.get_by_role("button", name="Share", exact=True)).to_be_visible()
            assert not server.on_store(lambda s: s.get("b-bob").shared)
            assert server.on_store(lambda s: s.get("b-bob").agent_id) == "cline"
        finally:
            browser.close()
