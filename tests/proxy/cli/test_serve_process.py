"""`tenure serve` as its own process, and the CLI reading through its API meanwhile."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from beliefs.model.models import Belief
from beliefs.opening import open_store
from proxy.cli.main import main
from tests.fakes.upstream import FakeUpstream
from tests.proxy import beliefs_seed as seed
from tests.proxy.cli.test_cli_server import free_port, start_tenure, stop_tenure


@pytest.fixture
def served(
    tmp_path: Path, upstream_server: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> Iterator[int]:
    home = tmp_path / "home"
    home.mkdir()
    with open_store(home / "tenure.duckdb") as store:
        for belief in seed.ALL:
            store.create(belief)
        replacement = Belief(
            id="b-pg17", user_id=seed.USER, canonical_name="postgres_17", scope=["domain:code"]
        )
        store.supersede("b-postgres", replacement)
    process, port = start_tenure(home, upstream_server.url)
    try:
        monkeypatch.setenv("TENURE_HOME", str(home))
        monkeypatch.setenv("TENURE_PORT", str(port))
        yield port
    finally:
        stop_tenure(process)


def test_cli_reads_through_the_api_while_serving(
    served: int, capsys: pytest.CaptureFixture[str]
) -> None:
    note = f"server running at http://127.0.0.1:{served}; using its API"

    assert main(["beliefs", "list", "--user", "alice", "--json"]) == 0
    out, err = capsys.readouterr()
    assert note in err
    assert sorted(b["id"] for b in json.loads(out)) == ["b-novel", "b-pg17", "b-tabs"]

    assert main(["beliefs", "show", "b-postgres", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["superseded_by"] == "b-pg17"
    assert main(["beliefs", "chain", "b-pg17"]) == 0
    out = capsys.readouterr().out
    assert out.index("b-postgres") < out.index("b-pg17")
    assert main(["beliefs", "history", "b-postgres", "--json"]) == 0
    events = [e["event"] for e in json.loads(capsys.readouterr().out)]
    assert events[0] == "created" and "superseded_by" in events
    assert main(["export", "--include-superseded"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5 and all(json.loads(line)["id"] for line in lines)

    assert main(["beliefs", "show", "b-missing"]) == 1
    err = capsys.readouterr().err
    assert "'b-missing'" in err and "Traceback" not in err


def test_second_server_on_the_same_data_says_it_is_locked(
    served: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--port", str(free_port())]) == 1
    err = capsys.readouterr().err
    assert "locked" in err and "Traceback" not in err


def test_served_proxy_answers(served: int, upstream_server: FakeUpstream) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "Which pg version?"}]}
    headers = {"X-Tenure-User": "alice", "X-Tenure-Scope": "domain:code"}
    resp = httpx.post(f"http://127.0.0.1:{served}/v1/chat/completions", json=body, headers=headers)
    assert resp.status_code == 200 and int(resp.headers["x-tenure-injected"]) >= 1


def test_context_command_uses_the_preview_while_serving(
    served: int, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["context", "--user", "alice", "--scope", "domain:code", "--query", "tabs or spaces?"]
    assert main([*argv, "--json"]) == 0
    out, err = capsys.readouterr()
    assert "using its API" in err
    data = json.loads(out)
    assert set(data) == {"persona", "pinned", "relevant", "open_questions", "budget"}
    assert main([*argv, "--as-of", "2026-01-01T00:00:00Z"]) == 1
    assert "--as-of" in capsys.readouterr().err
