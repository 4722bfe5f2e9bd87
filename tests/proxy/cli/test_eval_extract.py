"""`tenure eval-extract` end to end: the real CLI, LiteLLM, a stand-in model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extractor.eval_set import load_conversations
from proxy.cli.main import main
from tests.fakes.local_model import Behaviour, LocalModel, SeenRequest, empty
from tests.fakes.reference_model import reference_brain

ONLY = ["dev-mongo-driver", "dev-redis-to-valkey", "writer-chit-chat-weather"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("TENURE_HOME", str(path))
    monkeypatch.delenv("TENURE_EXTRACT_MODEL", raising=False)
    return path


def _only(*ids: str) -> list[str]:
    return [arg for i in ids for arg in ("--only", i)]


def test_two_models_are_scored_side_by_side_and_the_report_compares_later(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = reference_brain(load_conversations())

    def brain(seen: SeenRequest) -> Any:
        # "openai/weak" only ever chats: every job fails as unusable output.
        return good(seen) if seen.body["model"] == "good" else None

    report = tmp_path / "scores.json"
    with LocalModel(Behaviour(refuse_json_schema=True), brain=brain) as server:
        code = main(
            [
                "eval-extract",
                "--model",
                "openai/good",
                "--model",
                "openai/weak",
                "--api-base",
                server.url,
                *_only(*ONLY),
                "--report",
                str(report),
                "--details",
            ]
        )
    out = capsys.readouterr().out
    assert code == 0
    lines = {line.split("  ")[0]: line for line in out.splitlines()}
    assert "openai/good" in out and "openai/weak" in out
    assert "4/4 100%" in lines["facts found by retrieval"]
    assert "0/4 0%" in lines["facts found by retrieval"]
    assert "1/1 100%" in lines["right belief superseded"]
    assert "0/6" in lines["jobs failed"] and "5/6" in lines["jobs failed"]
    assert "ExtractionOutputInvalid 5" in out
    assert "1/6 17%" in lines["turns skipped by the pre-check"]  # "perfect, thanks"
    assert "json_object 5" in lines["output modes"]  # json_schema refused, learned once
    assert lines["uncached prompt tokens per turn"].split()[-2:] != ["0", "0"]
    assert float(lines["model calls per turn"].split()[-2]) > 0  # the good model's calls
    assert "openai/weak dev-mongo-driver: missed" in out
    assert not (home / "tenure.duckdb").exists()  # the run never touches TENURE_HOME

    saved = json.loads(report.read_text())
    assert [s["model"] for s in saved] == ["openai/good", "openai/weak"]
    assert saved[0]["facts_found"] == 4 and saved[1]["jobs_failed"] == 5
    assert main(["eval-extract", "--compare", str(report)]) == 0
    compared = capsys.readouterr().out
    assert "openai/good" in compared and "4/4 100%" in compared


def test_no_model_and_an_unknown_conversation_are_named_errors(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval-extract"]) == 1
    assert "no model to evaluate" in capsys.readouterr().err
    assert main(["eval-extract", "--model", "openai/x", "--only", "nope"]) == 1
    err = capsys.readouterr().err
    assert "no conversation 'nope'" in err and "dev-mongo-driver" in err
    assert main(["eval-extract", "--compare", str(home / "missing.json")]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_the_canary_verdict_is_reported(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def base_model(seen: SeenRequest) -> Any:
        return empty()  # every turn, the canary's too: the small-talk example's result

    with LocalModel(Behaviour(), brain=base_model, canary=None) as server:
        args = ["--model", "openai/base", "--api-base", server.url]
        code = main(["eval-extract", *args, *_only("writer-chit-chat-weather")])
    out = capsys.readouterr().out
    assert code == 0
    lines = {line.split("  ")[0]: line for line in out.splitlines()}
    assert "failed: it wrote no belief" in lines["canary (a turn with a known answer)"]
