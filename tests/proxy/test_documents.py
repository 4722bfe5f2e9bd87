"""Documents end to end: `tenure ingest` a folder, then a question in its scope reaches the
provider with the right passages and their citations; re-ingest syncs; a deleted file's
passages leave delivery and come back on undo."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from proxy.cli.home_record import clear_server, write_server
from proxy.cli.main import main
from tests.beliefs.documents.suite import CORPUS
from tests.fakes.upstream import FakeUpstream
from tests.proxy.conftest import Gateway
from tests.proxy.mcp.mcp_client import call

DOCS = {"X-Tenure-Scope": "domain:docs/runbooks"}
ROLLBACK = "How do I roll back the API deploy by hand?"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    target = tmp_path / "runbooks"
    shutil.copytree(CORPUS / "runbooks", target)
    return target


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("TENURE_HOME", str(path))
    return path


def ask(gateway: Gateway, upstream: FakeUpstream, text: str, headers: dict[str, str]) -> str:
    """The last user message as the provider received it."""
    gateway.openai().chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": text}], extra_headers=headers
    )
    body: dict[str, Any] = upstream.last("/chat/completions").json
    return str(body["messages"][-1]["content"])


def events(gateway: Gateway) -> int:
    return int(gateway.rows("SELECT count(*) FROM belief_events")[0][0])


def test_ingested_passages_reach_the_provider_with_citations(
    folder: Path,
    home: Path,
    make_gateway: Callable[..., Gateway],
    upstream: FakeUpstream,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["ingest", str(folder), "--scope", "docs:runbooks"]) == 0
    assert "5 new" in capsys.readouterr().out
    gateway = make_gateway()

    sent = ask(gateway, upstream, ROLLBACK, DOCS)
    assert sent.startswith(ROLLBACK)
    assert "(SOURCE)" in sent
    assert "kubectl argo rollouts undo api -n prod" in sent
    assert "- domain:docs/runbooks: deploy.md › Deploying the API › Rollback" in sent
    assert "##### Sources" in sent
    assert "PgBouncer" not in sent  # another file's passages stay out

    preview = httpx.get(
        f"{gateway.url}/api/prompts/preview",
        params={"scope": "domain:docs/runbooks", "query": ROLLBACK},
    ).json()
    first = preview["relevant"][0]
    assert first["source"] == "deploy.md › Deploying the API › Rollback"
    assert first["memory_class"] == "document" and first["source_type"] == "import"
    assert first["provenance"]["lines"] == [14, 16]

    # outside the docs scope, and for a turn sharing only everyday words: nothing
    assert ask(gateway, upstream, ROLLBACK, {"X-Tenure-Scope": "domain:code"}) == ROLLBACK
    assert ask(gateway, upstream, "How long does it take?", DOCS) == "How long does it take?"


def test_reingest_syncs_and_a_deleted_file_comes_back_on_undo(
    folder: Path,
    home: Path,
    make_gateway: Callable[..., Gateway],
    upstream: FakeUpstream,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["ingest", str(folder), "--scope", "docs:runbooks"]) == 0
    gateway = make_gateway()
    write_server(home, gateway.url)  # the CLI now goes through this server's API
    try:
        before = events(gateway)
        capsys.readouterr()
        assert main(["ingest", str(folder), "--scope", "docs:runbooks"]) == 0
        assert "5 unchanged; wrote 0" in capsys.readouterr().out
        assert events(gateway) == before  # an unchanged folder writes nothing

        (folder / "deploy.md").unlink()
        assert main(["ingest", str(folder), "--scope", "docs:runbooks", "--dry-run"]) == 0
        assert "would write 4" in capsys.readouterr().out
        assert "kubectl argo" in ask(gateway, upstream, ROLLBACK, DOCS)  # a dry run changes nothing

        assert main(["ingest", str(folder), "--scope", "docs:runbooks"]) == 0
        assert "1 removed" in capsys.readouterr().out
        assert ask(gateway, upstream, ROLLBACK, DOCS) == ROLLBACK

        listed = httpx.get(f"{gateway.url}/api/sources").json()
        gone = next(s for s in listed if s["path"] == "deploy.md")
        assert gone["deleted_at"] and gone["undo_until"]
        assert main(["sources", "restore", gone["id"]]) == 0
        assert "kubectl argo rollouts undo" in ask(gateway, upstream, ROLLBACK, DOCS)
    finally:
        clear_server(home)


def test_a_changed_passage_supersedes_its_old_version(
    folder: Path, home: Path, make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    assert main(["ingest", str(folder), "--scope", "docs:runbooks"]) == 0
    text = (folder / "deploy.md").read_text(encoding="utf-8")
    (folder / "deploy.md").write_text(
        text.replace("within two minutes", "within ninety seconds"), encoding="utf-8"
    )
    assert main(["ingest", str(folder), "--scope", "docs:runbooks"]) == 0
    gateway = make_gateway()
    sent = ask(gateway, upstream, ROLLBACK, DOCS)
    assert "ninety seconds" in sent and "two minutes" not in sent
    chains = gateway.rows(
        "SELECT count(*) FROM beliefs WHERE superseded_by IS NOT NULL AND memory_class = 'document'"
    )
    assert chains[0][0] == 1  # the old version stays, superseded: nothing else changed


def test_inject_min_trust_keeps_passages_out_but_recall_finds_them(
    folder: Path, home: Path, make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    assert main(["ingest", str(folder), "--scope", "docs:runbooks"]) == 0
    gateway = make_gateway(inject_min_trust=2)
    assert ask(gateway, upstream, ROLLBACK, DOCS) == ROLLBACK

    failed, result = call(f"{gateway.url}/mcp", "recall", {"query": ROLLBACK}, headers=DOCS)
    assert not failed
    first = result["hits"][0]
    assert first["citation"] == "- domain:docs/runbooks: deploy.md › Deploying the API › Rollback"
    assert "kubectl argo rollouts undo" in first["content"]

    failed, listed = call(f"{gateway.url}/mcp", "sources", {}, headers=DOCS)
    assert not failed
    assert [s["file"] for s in listed["sources"]] == [
        "cache.html",
        "database.md",
        "deploy.md",
        "incidents.rst",
        "oncall.txt",
    ]
    failed, other = call(f"{gateway.url}/mcp", "sources", {"scope": "domain:code"}, headers=DOCS)
    assert not failed and other["sources"] == []
