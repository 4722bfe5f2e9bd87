"""`tenure compact` and `tenure persona` on a store in TENURE_HOME."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from beliefs.opening import open_store
from proxy.cli.main import main
from tests.compaction.conftest import USER, belief
from tests.fakes.upstream import FakeUpstream, Raw
from tests.proxy.cli.test_serve_process import served as served  # a fixture


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TENURE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TENURE_UPSTREAM_URL", "http://127.0.0.1:9/v1")  # never reached
    return tmp_path / "home"


def test_compact_dry_run_then_run(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with open_store(home / "tenure.duckdb") as store:
        a = store.create(belief("raw_driver", "Uses the raw MongoDB driver."))
        b = store.create(belief("mongo_driver", "Uses the raw MongoDB driver."))
    assert main(["compact", "--dry-run", "--user", USER]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dry run") and "would change: 1 merges (2 superseded)" in out
    assert f"merge {a.id}, {b.id}" in out
    assert main(["compact", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["merged"] == 1 and report["dry_run"] is False
    with open_store(home / "tenure.duckdb") as store:
        assert store.get(a.id).superseded_by == report["changes"][0]["survivor_id"]
        assert store.verify() == []


def test_compact_rejects_a_bad_scope(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compact", "--scope", "code"]) == 1
    assert "--scope 'code'" in capsys.readouterr().err


def test_persona_show_set_regenerate(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with open_store(home / "tenure.duckdb") as store:
        store.create(belief("answers", "Prefers short answers.", scope=["user:universal"]))
    assert main(["persona", "show", "--user", USER]) == 0
    assert "You prefer short answers." in capsys.readouterr().out
    assert main(["persona", "regenerate", "--user", USER, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "deterministic"
    assert main(["persona", "set", "You are Alice.", "--user", USER]) == 0
    capsys.readouterr()
    assert main(["persona", "regenerate", "--user", USER]) == 0
    out, err = capsys.readouterr()
    assert "You are Alice." in out and "set by hand" in err and "nothing changed" in err
    assert main(["persona", "set", "x" * 900, "--user", USER]) == 1
    assert "900 characters" in capsys.readouterr().err


def test_commands_go_through_the_api_while_a_server_runs(
    served: int, capsys: pytest.CaptureFixture[str]
) -> None:
    note = f"server running at http://127.0.0.1:{served}"
    assert main(["compact", "--json", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert note in err and json.loads(out)["trigger"] == "api"
    assert main(["persona", "set", "You are Alice.", "--user", "alice"]) == 0
    capsys.readouterr()
    assert main(["persona", "show", "--user", "alice", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["text"], shown["source"]) == ("You are Alice.", "operator")
    assert main(["persona", "regenerate", "--user", "alice"]) == 0
    out, err = capsys.readouterr()
    assert "You are Alice." in out and "nothing changed" in err


def test_compact_json_stays_json_when_the_model_call_fails(
    home: Path,
    upstream: FakeUpstream,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with open_store(home / "tenure.duckdb") as store:
        store.create(belief("queue_rabbitmq", "Jobs run on RabbitMQ.", aliases=["queue"]))
        store.create(belief("queue_kafka", "Events stream through Kafka.", aliases=["queue"]))
    monkeypatch.setenv("TENURE_COMPACTION_MODEL", "openai/m")
    monkeypatch.setenv("TENURE_EXTRACT_API_BASE", upstream.url)
    upstream.queue(Raw(500, b'{"error": {"message": "the model is down"}}'))
    upstream.queue(Raw(500, b'{"error": {"message": "the model is down"}}'))
    code = main(["compact", "--json", "--user", USER])
    out, err = capsys.readouterr()
    report = json.loads(out)  # nothing the model library prints gets in the way
    assert code == 1 and report["errors"], err
    assert upstream.requests, "the model was called"
