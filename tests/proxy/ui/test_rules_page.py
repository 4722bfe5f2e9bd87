"""The rules page through the real app: the list, the add, edit and delete forms, refusals that
name the field, CSRF, escaping, and the prompt preview that shows what a request would get."""

from __future__ import annotations

import re
from collections.abc import Callable
from html import unescape

from beliefs.model.rules import Rule
from beliefs.store.rule_store import load_rules
from tests.proxy.ui import seed
from tests.proxy.ui.conftest import UI
from tests.proxy.ui.test_pages import text


def rules(ui: UI, *, include_deleted: bool = False) -> dict[str, Rule]:
    found = ui.on_store(lambda s: load_rules(s.conn, include_deleted=include_deleted))
    return {r.id: r for r in found}


def by_pattern(ui: UI, pattern: str) -> Rule:
    return next(r for r in rules(ui).values() if r.pattern == pattern)


def test_lists_every_rule_with_label_class_default_and_explanation(ui: UI) -> None:
    html = ui.client.get("/rules").text
    assert '<a href="/rules" aria-current="page">Rules</a>' in html
    page = text(html)
    for pattern in ("user:universal", "project:*", "domain:docs", "domain:scratch"):
        assert pattern in page, pattern
    assert page.count("shipped default") == 4
    docs = text(html.split('id="rule-r-default-docs"')[1].split("</li>")[0])
    assert "(SOURCE)" in docs and "Bonus 0.12 (+12 %)" in docs and "document" in docs
    assert "{{content}}" in docs and "Delete default" in docs
    scratch = text(html.split('id="rule-r-default-scratch"')[1].split("</li>")[0])
    assert "(MEMORY)" in scratch and "working" in scratch and "Warning" not in scratch
    for explained in (
        "${user_id} is exactly one segment",
        "applies to domain:code/python",
        "0.2 means +20 %",
        "{{content}} marks where the hits go",
        "A deleted default never comes back",
    ):
        assert explained in page, explained
    assert html.count('name="csrf_token"') >= len(re.findall(r'<form method="post"', html))


def test_add_a_rule(ui: UI) -> None:
    resp = ui.form(
        "/rules",
        {
            "pattern": "domain:legal",
            "bonus": "0.45",
            "template": "(SOURCE) Cite the paragraph:\r\n{{content}}",
            "memory_class": "document",
        },
    )
    assert resp.status_code == 303, resp.text
    added = by_pattern(ui, "domain:legal")
    assert resp.headers["location"] == f"/rules?notice=rule_added#rule-{added.id}"
    assert added.bonus == 0.45 and added.memory_class == "document"
    assert added.template == "(SOURCE) Cite the paragraph:\n{{content}}"
    html = ui.client.get(resp.headers["location"]).text
    mine = text(html.split(f'id="rule-{added.id}"')[1].split("</li>")[0])
    assert "(SOURCE)" in mine and "+45 %" in mine and "shipped default" not in mine
    assert "Warning: bonus 0.45 is above 0.3" in mine
    assert "Rule added" in text(html)
    # blank fields: no bonus, no template, no class
    plain = ui.form("/rules", {"pattern": "project:billing", "bonus": "", "template": " "})
    assert plain.status_code == 303
    rule = by_pattern(ui, "project:billing")
    assert (rule.bonus, rule.template, rule.memory_class) == (0.0, None, None)


def test_edit_a_rule(ui: UI) -> None:
    resp = ui.form(
        "/rules/r-default-scratch/edit",
        {
            "pattern": "domain:scratch",
            "bonus": "0.1",
            "template": "(MEMORY) Only for this task:",
            "memory_class": "",
        },
    )
    assert resp.status_code == 303, resp.text
    assert resp.headers["location"] == "/rules?notice=rule_saved#rule-r-default-scratch"
    edited = rules(ui)["r-default-scratch"]
    assert (edited.bonus, edited.template, edited.memory_class) == (
        0.1,
        "(MEMORY) Only for this task:",
        None,
    )
    assert edited.default_key == "scratch-v1"  # still the shipped default, now edited
    page = text(ui.client.get("/rules?notice=rule_saved").text)
    assert "Rule saved" in page and "Only for this task:" in page


def test_delete_a_rule(ui: UI) -> None:
    resp = ui.form("/rules/r-default-docs/delete")
    assert resp.status_code == 303 and resp.headers["location"] == "/rules?notice=rule_deleted"
    assert "r-default-docs" not in rules(ui)
    assert rules(ui, include_deleted=True)["r-default-docs"].pattern == "domain:docs"
    html = ui.client.get(resp.headers["location"]).text
    assert 'id="rule-r-default-docs"' not in html
    assert "A shipped default stays deleted" in text(html)
    again = ui.form("/rules/r-default-docs/delete")
    assert again.status_code == 404 and "no rule with id 'r-default-docs'" in text(again.text)


def test_refused_values_are_shown_naming_the_field(ui: UI) -> None:
    resp = ui.form("/rules", {"pattern": "domain:legal", "bonus": "lots", "template": "Keep me"})
    assert resp.status_code == 400
    page = text(resp.text)
    assert 'Not saved: bonus="lots": use a number' in page and "(field: bonus)" in page
    add_form = resp.text.split("<summary>Add a rule</summary>")[1]
    assert 'name="bonus"' in add_form and 'aria-invalid="true"' in add_form
    assert 'value="domain:legal"' in add_form and "Keep me</textarea>" in add_form
    assert by_pattern_missing(ui, "domain:legal")

    too_big = ui.form("/rules", {"pattern": "domain:legal", "bonus": "1.5"})
    assert too_big.status_code == 400 and "(field: bonus)" in text(too_big.text)
    pattern = ui.form("/rules/r-default-project/edit", {"pattern": "galaxy", "bonus": "0.1"})
    assert pattern.status_code == 400
    assert "'galaxy'" in text(pattern.text) and "(field: pattern)" in text(pattern.text)
    edit_form = pattern.text.split('action="/rules/r-default-project/edit"')[1].split("</form>")[0]
    assert 'value="galaxy"' in edit_form and 'aria-invalid="true"' in edit_form
    assert rules(ui)["r-default-project"].pattern == "project:*"
    klass = ui.form("/rules/r-default-project/edit", {"pattern": "project:*", "memory_class": "x"})
    assert klass.status_code == 400 and "(field: memory_class)" in text(klass.text)


def by_pattern_missing(ui: UI, pattern: str) -> bool:
    return all(r.pattern != pattern for r in rules(ui).values())


def test_forms_without_the_csrf_token_change_nothing(ui: UI) -> None:
    ui.csrf("/rules")  # the browser has the cookie; the forged forms have no token
    post = ui.client.post
    added = post("/rules", data={"pattern": "domain:evil", "bonus": "1"}, follow_redirects=False)
    assert added.status_code == 403 and "CSRF" in added.text
    edit = {"pattern": "domain:docs", "bonus": "1", "csrf_token": "guessed"}
    assert post("/rules/r-default-docs/edit", data=edit).status_code == 403
    assert post("/rules/r-default-docs/delete", data={"next": "/rules"}).status_code == 403
    cross_site = {"csrf_token": ui.csrf("/rules")}
    evil = {"origin": "https://evil.example"}
    assert post("/rules/r-default-docs/delete", data=cross_site, headers=evil).status_code == 403
    assert by_pattern_missing(ui, "domain:evil")
    assert rules(ui)["r-default-docs"].bonus == 0.12


def test_a_template_is_shown_as_text_never_markup(ui: UI) -> None:
    hostile = "<script>alert('rule')</script> {{content}} <img src=x onerror=alert(1)>"
    ui.form("/rules", {"pattern": "domain:writing", "template": hostile})
    html = ui.client.get("/rules").text
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&#39;rule&#39;)&lt;/script&gt;" in html
    refused = ui.form("/rules", {"pattern": "domain:<b>x</b>", "template": hostile})
    assert refused.status_code == 400
    assert "<b>x</b>" not in refused.text and "<script>alert" not in refused.text
    preview = ui.client.get(
        "/rules",
        params={
            "preview": "1",
            "user": "alice",
            "scope": "domain:writing",
            "query": "hostile markup",
        },
    ).text
    assert "hostile_markup" in preview
    assert "<script>alert" not in preview and "<img src=x" not in preview


def test_preview_shows_what_the_request_would_receive(ui: UI) -> None:
    ask = {"user": "alice", "scope": "domain:code", "model": "gpt-4o", "query": "which pg?"}
    data = ui.client.get("/api/prompts/preview", params=ask).json()
    html = ui.client.get("/rules", params={**ask, "preview": "1"}).text
    page = text(html)
    assert data["system_block"] and data["system_block"] in unescape(html)
    assert data["user_block"] and data["user_block"] in unescape(html)
    assert "Pinned kubernetes" in page and data["persona"] in page
    relevant = html.split("<h3>Relevant</h3>")[1].split("<h3>")[0]
    assert 'href="/beliefs/b-postgres-17"' in relevant
    assert f"{data['relevant'][0]['score']}" in relevant and "alias “pg”" in text(relevant)
    budget = data["budget"]
    assert f"{budget['used_tokens']} of {budget['limit_tokens']}" in page
    assert f"Characters {data['chars']}" in page
    for name, value in ask.items():  # the form keeps what was asked
        assert value in html.split('id="preview"')[1].split("</form>")[0], name


def test_preview_lists_what_the_budget_shed_and_names_a_bad_field(
    make_ui: Callable[..., UI],
) -> None:
    ui = make_ui(beliefs=seed.ALL, max_beliefs=1)
    ask = {"preview": "1", "user": "alice", "scope": "domain:code", "query": "pg and k8s"}
    html = ui.client.get("/rules", params=ask).text
    shed = html.split("<h3>Shed by the budget</h3>")[1].split("<h3>")[0]
    assert 'href="/beliefs/b-postgres"' in shed and "max_beliefs" in shed
    bad = ui.client.get("/rules", params={**ask, "scope": "galaxy"})
    assert bad.status_code == 400
    assert "'galaxy'" in text(bad.text) and "(field: scope)" in text(bad.text)


def test_with_an_access_key_the_rules_page_asks_for_it(make_ui: Callable[..., UI]) -> None:
    ui = make_ui(api_key="sk-tenure-test")
    resp = ui.client.get("/rules", follow_redirects=False)
    assert resp.status_code == 303 and resp.headers["location"] == "/login?next=%2Frules"
