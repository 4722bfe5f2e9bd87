"""The pages through the real app: what they show, and the forms that change beliefs."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from html import unescape

from beliefs.model.models import Belief, utcnow
from beliefs.store.belief_store import BeliefStore
from beliefs.store.conflicts import record_conflict
from extractor.jobs import JobQueue
from extractor.turn import Turn
from proxy.gateway.injections import InjectionRecord, save_records
from tests.proxy.ui.conftest import UI


def text(html: str) -> str:
    """The page's visible text, roughly: tags dropped, whitespace collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_empty_store_says_where_to_point_the_agent(make_ui: Callable[..., UI]) -> None:
    ui = make_ui()
    page = text(ui.client.get("/beliefs").text)
    assert "No beliefs yet Point an agent at http://localhost:5757/v1" in page
    assert page.count("No beliefs yet") == 1  # the heading says it; the hint need not again
    assert ui.client.get("/", follow_redirects=False).headers["location"] == "/beliefs"


def test_list_shows_markers_and_counts_per_scope(ui: UI) -> None:
    html = ui.client.get("/beliefs", params={"user": "alice"}).text
    page = text(html)
    assert "kubernetes" in page and "pinned" in page and "pending" in page
    assert "domain:code 3 · 1 pinned · 1 pending" in page
    assert 'href="/beliefs/b-k8s"' in html
    assert "postgres_17" in page and 'href="/beliefs/b-postgres"' not in html  # superseded hidden
    searched = text(ui.client.get("/beliefs", params={"q": "mysql"}).text)
    assert "1 belief found" in searched and "postgres_17" in searched
    assert "rejected_alternative “mysql”" in searched
    nothing = text(ui.client.get("/beliefs", params={"q": "zebra"}).text)
    assert "No belief matches “zebra”" in nothing


def test_belief_page_shows_everything_about_it(ui: UI) -> None:
    record = InjectionRecord(
        request_id="req_abc",
        created_at=datetime(2026, 11, 30, 9, 0, tzinfo=UTC),
        user_id="alice",
        agent_id="cline",
        scopes=("domain:code",),
        model="gpt-4o-mini",
        endpoint="chat/completions",
        query="write a migration for pg",
        layers={"pinned": [], "relevant": ["b-postgres-17"]},
        persona=True,
        approx_tokens=80,
    )
    ui.on_store(lambda s: save_records(s, [record]))
    page = text(ui.client.get("/beliefs/b-postgres-17").text)
    for expected in (
        "Billing moved to PostgreSQL 17.",
        "Why it matters Write SQL for PostgreSQL 17.",
        "mysql",  # rejected alternative
        "domain:code",
        "0.80",
        "operator",
        "superseded 20",  # the older version's stamp on the timeline
        "billing upgrade",  # the reason
        "(this one)",
        "req_abc",
        "relevant",
        "supersedes",  # history
    ):
        assert expected in page, expected
    learned = seed_with_provenance(ui)
    assert 'href="/audit?request_id=req_learned"' in ui.client.get(f"/beliefs/{learned}").text
    old = text(ui.client.get("/beliefs/b-postgres").text)
    assert "superseded" in old and "postgres_17" in old
    missing = ui.client.get("/beliefs/b-nope")
    assert missing.status_code == 404 and "b-nope" in missing.text


def test_edit_form_changes_fields_and_keeps_history(ui: UI) -> None:
    resp = ui.form(
        "/beliefs/b-k8s/edit",
        {
            "canonical_name": "kubernetes",
            "content": "Deploys run on EKS.",
            "why_it_matters": "Give kubectl commands.",
            "aliases": "k8s, kube\nthe cluster thing",
            "rejected_alternatives": "nomad",
            "scope": "domain:code",
            "epistemic_status": "active",
            "delivery": "always",
        },
    )
    assert resp.status_code == 303 and resp.headers["location"] == "/beliefs/b-k8s?notice=saved"
    stored = ui.belief("b-k8s")
    assert stored.aliases == ["k8s", "kube", "the cluster thing"]
    assert stored.rejected_alternatives == ["nomad"] and stored.delivery == "always"
    assert stored.content == "Deploys run on EKS." and stored.user_edited
    event = stored.change_log[-1]
    assert event.event == "user_correction"
    assert set(event.detail["changes"]) == {
        "content",
        "why_it_matters",
        "aliases",
        "rejected_alternatives",
        "delivery",
        "user_edited",
    }
    page = text(ui.client.get(resp.headers["location"]).text)
    assert "Saved." in page and "user_correction" in page


def test_a_refused_edit_explains_itself(ui: UI) -> None:
    resp = ui.form("/beliefs/b-guess/edit", {"canonical_name": "kubernetes"})
    assert resp.status_code == 409
    page = text(resp.text)
    assert "already has a live belief named 'kubernetes'" in page and "canonical_name" in page
    bad = ui.form("/beliefs/b-guess/edit", {"scope": "everywhere"})
    assert bad.status_code == 400 and "everywhere" in bad.text


def test_create_form(ui: UI) -> None:
    resp = ui.form(
        "/beliefs",
        {
            "canonical_name": "Dark mode",
            "content": "Likes dark mode.",
            "aliases": "dark theme",
            "scope": "user:universal",
            "user_id": "alice",
            "type": "preference",
        },
    )
    assert resp.status_code == 303
    belief_id = resp.headers["location"].split("/")[2].split("?")[0]
    stored = ui.belief(belief_id)
    assert stored.canonical_name == "dark_mode" and stored.source_type == "operator"


def test_delete_then_undo_from_the_list(ui: UI) -> None:
    resp = ui.form("/beliefs/b-tabs/delete")
    assert resp.status_code == 303 and resp.headers["location"] == "/beliefs?deleted=b-tabs"
    assert ui.belief("b-tabs").deleted_at is not None
    page = ui.client.get("/beliefs?deleted=b-tabs").text
    assert "Deleted" in page and 'action="/beliefs/b-tabs/restore"' in page
    resp = ui.form("/beliefs/b-tabs/restore")
    assert resp.headers["location"] == "/beliefs/b-tabs?notice=restored"
    assert ui.belief("b-tabs").deleted_at is None


def test_review_page_confirms_beliefs_and_resolves_conflicts(ui: UI) -> None:
    proposal = Belief(
        user_id="alice",
        canonical_name="kubernetes",
        content="Deploys moved to Nomad.",
        scope=["domain:code"],
        source_type="extracted",
    )

    def conflict(store: BeliefStore) -> str | None:
        return record_conflict(
            store,
            user_id="alice",
            existing_id="b-k8s",
            reason="deploy target changed",
            proposed=proposal,
        )

    conflict_id = ui.on_store(conflict)
    assert conflict_id
    page = text(ui.client.get("/review").text)
    assert "prefers_fastify" in page and "Seems to prefer Fastify" in page
    assert "deploy target changed" in page and "Deploys moved to Nomad." in page
    resp = ui.form("/beliefs/b-guess/review", {"state": "confirmed", "next": "/review"})
    assert resp.headers["location"] == "/review?notice=confirmed"
    assert ui.belief("b-guess").review_state == "confirmed"
    resp = ui.form(f"/review/conflicts/{conflict_id}/resolve", {"resolution": "keep_existing"})
    assert resp.headers["location"] == "/review?notice=resolved"
    after = text(ui.client.get("/review?notice=resolved").text)
    assert "Nothing to review." in after and "No open conflicts." in after


def test_audit_shows_what_each_request_received(ui: UI) -> None:
    records = []
    for n, layers in enumerate(
        ({"pinned": ["b-k8s"], "relevant": ["b-postgres-17"]}, {"pinned": ["b-k8s"]})
    ):
        record = InjectionRecord(
            request_id=f"req_{n}",
            created_at=datetime(2026, 11, 30, 9, n, tzinfo=UTC),
            user_id="alice",
            agent_id=None,
            scopes=("domain:code",),
            model="gpt-4o-mini",
            endpoint="chat/completions",
            query=f"question {n} about pg",
            layers=layers,
            persona=n == 0,
            approx_tokens=50,
        )
        records.append(record)
    ui.on_store(lambda s: save_records(s, records))
    page = text(ui.client.get("/audit").text)
    assert "req_0" in page and "req_1" in page and "persona prelude" in page
    assert "postgres_17 — Billing moved to PostgreSQL 17." in page
    only = text(ui.client.get("/audit", params={"belief_id": "b-postgres-17"}).text)
    assert "req_0" in only and "req_1" not in only


def test_status_page_lists_failed_jobs_and_retries_them(ui: UI) -> None:
    turn = Turn(request_id="req_x", user_id="alice", model="gpt-4o-mini", user_message="hi")

    def failed_job(store: BeliefStore) -> str:
        queue = JobQueue(store)
        job_id = queue.enqueue(turn)
        claimed = queue.claim()
        assert claimed is not None and claimed.id == job_id
        queue.fail(job_id, "the model answered 500: upstream down")
        return job_id

    job_id = ui.on_store(failed_job)
    page = text(ui.client.get("/status").text)
    assert job_id in page and "the model answered 500: upstream down" in page
    assert "Compaction runs: not available" not in page  # compaction is mounted here
    resp = ui.form(f"/status/jobs/{job_id}/retry")
    assert resp.headers["location"] == "/status?notice=retried"
    assert ui.on_store(lambda s: JobQueue(s).get(job_id)).status == "pending"


def test_pages_are_usable_without_javascript(ui: UI) -> None:
    html = ui.client.get("/beliefs/b-k8s").text
    forms = re.findall(r'<form method="post" action="([^"]+)"', html)
    assert {"/beliefs/b-k8s/pin", "/beliefs/b-k8s/review", "/beliefs/b-k8s/delete"} <= set(forms)
    assert "/beliefs/b-k8s/edit" in forms
    assert html.count('name="csrf_token"') >= len(forms)


def test_a_superseded_version_can_still_be_corrected(ui: UI) -> None:
    html = ui.client.get("/beliefs/b-postgres").text
    assert 'name="epistemic_status"' not in html  # its status belongs to the chain
    resp = ui.form(
        "/beliefs/b-postgres/edit",
        {"canonical_name": "postgres", "content": "Billing stored everything in PostgreSQL 16."},
    )
    assert resp.status_code == 303, resp.text
    stored = ui.belief("b-postgres")
    assert stored.content.endswith("PostgreSQL 16.") and stored.superseded_by == "b-postgres-17"


def test_deleted_beliefs_can_be_listed_and_restored_later(ui: UI) -> None:
    ui.form("/beliefs/b-tabs/delete")
    assert "tabs_indentation" not in text(ui.client.get("/beliefs").text)
    listed = text(ui.client.get("/beliefs", params={"include_deleted": "true"}).text)
    assert "tabs_indentation" in listed and "deleted" in listed
    assert 'action="/beliefs/b-tabs/restore"' in ui.client.get("/beliefs/b-tabs").text


def test_audit_shows_the_text_each_request_received_after_later_edits(ui: UI) -> None:
    record = InjectionRecord(
        request_id="req_before",
        created_at=utcnow(),
        user_id="alice",
        agent_id=None,
        scopes=("domain:code",),
        model=None,
        endpoint="chat/completions",
        query="k8s",
        layers={"pinned": ["b-k8s"]},
        persona=False,
        approx_tokens=10,
    )
    ui.on_store(lambda s: save_records(s, [record]))
    page = ui.client.get("/audit").text
    assert "Deploys run on a managed Kubernetes cluster." in page
    assert ">edited since</span>" not in page
    resp = ui.form(
        "/beliefs/b-k8s/edit",
        {"canonical_name": "kubernetes", "content": "Deploys moved to Nomad."},
    )
    assert resp.status_code == 303, resp.text
    after = replace(record, request_id="req_after", created_at=utcnow())
    ui.on_store(lambda s: save_records(s, [after]))
    page = text(ui.client.get("/audit").text)
    # req_after (newest, first) got the new text; req_before still shows what it received.
    assert page.index("Deploys moved to Nomad.") < page.index("req_before")
    assert "Deploys run on a managed Kubernetes cluster." in page.split("req_before")[1]
    assert ui.client.get("/audit").text.count(">edited since</span>") == 1
    api = ui.client.get("/api/injections", params={"as_injected": "true"}).json()
    views = {r["request_id"]: r["as_injected"]["b-k8s"] for r in api}
    assert views["req_before"]["content"] == "Deploys run on a managed Kubernetes cluster."
    assert views["req_before"]["edited_since"] and not views["req_after"]["edited_since"]
    assert ui.client.get("/api/injections", params={"as_injected": "maybe"}).status_code == 400


def test_an_imported_id_with_odd_characters_still_works(make_ui: Callable[..., UI]) -> None:
    odd = Belief(id="tenure:42 #a", user_id="alice", canonical_name="odd_id", content="x")
    ui = make_ui(beliefs=[odd])
    html = ui.client.get("/beliefs").text
    assert 'href="/beliefs/tenure%3A42%20%23a"' in html
    page = ui.client.get("/beliefs/tenure%3A42%20%23a")
    assert page.status_code == 200 and "odd_id" in page.text
    assert 'action="/beliefs/tenure%3A42%20%23a/pin"' in page.text
    resp = ui.form("/beliefs/tenure%3A42%20%23a/pin", {"pinned": "true"})
    assert resp.status_code == 303 and ui.belief("tenure:42 #a").pinned


def seed_with_provenance(ui: UI) -> str:
    """A belief the extractor wrote from request req_learned; returns its id."""
    belief = Belief(
        user_id="alice",
        canonical_name="learned_from_a_turn",
        content="Learned.",
        source_type="extracted",
        provenance={"request_id": "req_learned", "model": "gpt-4o-mini"},
    )
    return ui.on_store(lambda s: s.create(belief, actor="extractor")).id


def test_expiry_from_the_create_and_edit_forms(ui: UI) -> None:
    form = {"canonical_name": "sprint_goal", "content": "Ship the export.", "user_id": "alice"}
    resp = ui.form("/beliefs", {**form, "expires_in_days": "7"})
    assert resp.status_code == 303, resp.text
    belief_id = resp.headers["location"].split("/")[2].split("?")[0]
    expires = ui.belief(belief_id).expires_at
    assert expires is not None and timedelta(days=6) < expires - utcnow() <= timedelta(days=7)
    here = f"/beliefs/{belief_id}"
    page = text(ui.client.get(here).text)
    assert f"Expires {expires:%Y-%m-%d %H:%M} UTC" in page and "expired:" not in page
    kept = ui.form(here + "/edit", {"content": "Ship the export first.", "expires_in_days": ""})
    assert kept.status_code == 303 and ui.belief(belief_id).expires_at == expires
    refused = ui.form(here + "/edit", {"expires_in_days": "0"})
    assert refused.status_code == 400 and "(field: expires_in_days)" in text(refused.text)
    words = ui.form("/beliefs", {**form, "canonical_name": "other", "expires_in_days": "soon"})
    assert words.status_code == 400 and "(field: expires_in_days)" in text(words.text)
    ui.on_store(lambda s: s.update(belief_id, {"expires_at": utcnow() - timedelta(minutes=1)}))
    assert "expired: no longer delivered" in text(ui.client.get(here).text)
    cleared = ui.form(here + "/edit", {"clear_expiry": "1", "expires_in_days": "3"})
    assert cleared.status_code == 303 and ui.belief(belief_id).expires_at is None
    assert "Expires never" in text(ui.client.get(here).text)
