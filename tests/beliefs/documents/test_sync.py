"""Re-ingest is a sync: unchanged passages are left alone, changed ones supersede their old
version, removed ones leave retrieval; a source is deleted softly, restored, purged; an
interrupted ingest keeps the files it finished."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from beliefs.documents import (
    MIGRATIONS,
    DocumentFile,
    FileReport,
    delete_source,
    ingest,
    list_sources,
    purge_sources,
    restore_source,
)
from beliefs.documents.ingest import stored_passages
from beliefs.model.errors import InvalidBelief
from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore

USER = "u"
GUIDE = (
    "# Guide\n\nIntro about Argo.\n\n## Rollback\n\nRun the undo.\n\n## Flags\n\nDark launches.\n"
)


def doc(text: str, path: str = "guide.md") -> DocumentFile:
    return DocumentFile(path, text, "markdown", len(text))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[BeliefStore]:
    with open_store(tmp_path / "m.duckdb") as opened:
        opened.ensure_schema(MIGRATIONS)
        yield opened


def events(store: BeliefStore) -> int:
    return int(store.execute("SELECT count(*) FROM belief_events").fetchone()[0])  # type: ignore[index]


def live(store: BeliefStore) -> dict[str, str]:
    return {b.content: b.id for bs in stored_passages(store, USER).values() for b in bs}


def test_passages_are_document_beliefs_at_the_lowest_trust(store: BeliefStore) -> None:
    ingest(store, USER, "docs:handbook", [doc(GUIDE)], root="r")
    beliefs = store.list(user_id=USER)
    assert len(beliefs) == 3
    for b in beliefs:
        assert b.memory_class == "document" and b.trust == 1 and b.scope == ["domain:docs/handbook"]
        assert set(b.provenance) >= {"file", "heading", "lines", "hash", "ingested_at", "epoch"}
        assert not b.aliases  # kept out of the belief alias index


def test_unchanged_writes_nothing_and_a_change_supersedes(store: BeliefStore) -> None:
    first = ingest(store, USER, "docs:handbook", [doc(GUIDE)], root="r")
    before, ids = events(store), live(store)
    again = ingest(store, USER, "docs:handbook", [doc(GUIDE)], root="r")
    assert again.written == 0 and events(store) == before and live(store) == ids
    assert first.epoch != again.epoch

    changed = GUIDE.replace("Run the undo.", "Run the undo twice.").replace(
        "## Flags\n\nDark launches.\n", ""
    )
    plan = ingest(store, USER, "docs:handbook", [doc(changed)], root="r", dry_run=True)
    assert (plan.files[0].kept, plan.files[0].changed, plan.files[0].removed) == (1, 1, 1)
    assert live(store) == ids  # a dry run writes nothing
    ingest(store, USER, "docs:handbook", [doc(changed)], root="r")
    now = live(store)
    assert set(now) == {"Intro about Argo.", "Run the undo twice."}
    assert now["Intro about Argo."] == ids["Intro about Argo."]
    old = store.get(ids["Run the undo."])
    assert old.superseded_by == now["Run the undo twice."]
    assert store.get(ids["Dark launches."]).deleted_at is not None
    assert store.verify() == []


def test_a_file_gone_from_its_folder_is_deleted_and_comes_back(store: BeliefStore) -> None:
    ingest(store, USER, "docs:handbook", [doc(GUIDE), doc("Other.\n", "b.md")], root="r")
    upload = ingest(store, USER, "docs:handbook", [doc(GUIDE)], root="r")
    assert "Other." in live(store) and len(upload.files) == 1  # an upload removes nothing
    report = ingest(store, USER, "docs:handbook", [doc(GUIDE)], root="r", present=["guide.md"])
    assert [(f.path, f.status) for f in report.files][-1] == ("b.md", "removed")
    assert "Other." not in live(store)
    gone = next(s for s in list_sources(store, USER) if s.path == "b.md")
    assert gone.deleted_at is not None
    restore_source(store, gone.id)
    assert "Other." in live(store)
    delete_source(store, gone.id)
    assert purge_sources(store, USER) == []  # still within the grace period
    assert [s.id for s in purge_sources(store, USER, ids=[gone.id])] == [gone.id]
    assert [s.path for s in list_sources(store, USER)] == ["guide.md"]
    assert all(
        b.provenance["file"] == "guide.md" for b in store.list(user_id=USER, include_deleted=True)
    )


def test_an_interrupted_ingest_keeps_finished_files_and_resumes(store: BeliefStore) -> None:
    files = [doc(GUIDE, "a.md"), doc(GUIDE, "b.md"), doc(GUIDE, "c.md")]

    def stop_after_first(report: FileReport) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ingest(store, USER, "docs:handbook", files, root="r", progress=stop_after_first)
    assert [s.path for s in list_sources(store, USER)] == ["a.md"]
    resumed = ingest(store, USER, "docs:handbook", files, root="r")
    assert [f.status for f in resumed.files] == ["unchanged", "new", "new"]


def test_a_scope_without_a_source_rule_is_refused(store: BeliefStore) -> None:
    with pytest.raises(InvalidBelief, match="no \\(SOURCE\\) rule"):
        ingest(store, USER, "project:billing", [doc(GUIDE)], root="r")
    with pytest.raises(InvalidBelief, match="not a docs scope"):
        ingest(store, USER, "docs:Bad Name!", [doc(GUIDE)], root="r")
