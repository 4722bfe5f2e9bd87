"""`tenure context` and `tenure eval` through the real CLI and a real store."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from beliefs.model.models import Belief
from beliefs.opening import open_store
from proxy.cli.main import main
from tests.data import SAMPLE_BELIEFS

SEED = str(SAMPLE_BELIEFS)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TENURE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_conformance_suite_passes_72_of_72(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], conformance: Path
) -> None:
    paper = conformance / "tenure-v1.0.0-paper"
    report = tmp_path / "report.json"
    code, out, err = run(
        capsys,
        "eval",
        "--beliefs", str(paper / "beliefs.seed.json"),
        "--cases", str(paper / "retrieval.cases.json"),
        "--sessions", str(paper / "session-retrieval.cases.json"),
        "--persona", str(conformance / "persona.json"),
        "--report", str(report),
    )  # fmt: skip
    assert (code, err) == (0, ""), out
    assert out.splitlines()[-1] == "72 passed, 0 failed"
    entries = json.loads(report.read_text())
    assert len(entries) == 72 and all(e["passed"] for e in entries)
    keys = {"case_id", "passed", "failures", "persona", "pinned", "relevant", "open_questions",
            "scores", "latency_ms"}  # fmt: skip
    assert all(set(e) == keys for e in entries)
    by_id = {e["case_id"]: e for e in entries}
    assert "session-drift-noise-10-turns-implicit-redis#10" in by_id
    mongoose = by_id["negative-guidance-mongoose"]["scores"][0]
    assert mongoose["id"] == "b-mongo-raw-driver"
    assert mongoose["clauses"][0]["term"] == "mongoose~moongoose"
    assert not (home / "tenure.duckdb").exists()  # the run never touches TENURE_HOME


def test_eval_reports_failed_cases_and_exits_non_zero(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([
        {"caseId": "ok", "scope": ["domain:code"], "query": "k8s?",
         "userId": "sample-user",
         "expect": {"relevantBeliefs": {"shouldOnlyInclude": ["b-k8s-entity"]}}},
        {"caseId": "wrong", "scope": ["domain:code"], "query": "k8s?", "userId": "sample-user",
         "expect": {"relevantBeliefs": {"shouldOnlyInclude": ["b-vue-entity"]}}},
    ]))  # fmt: skip
    code, out, _ = run(capsys, "eval", "--beliefs", SEED,
                       "--cases", str(cases))  # fmt: skip
    assert code == 1
    lines = out.splitlines()
    assert lines[-1] == "1 passed, 1 failed"
    assert lines[0].startswith("FAIL wrong: relevant: missing ['b-vue-entity']")


def test_eval_names_a_bad_cases_file(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "cases.json"
    bad.write_text("{not json")
    code, _, err = run(capsys, "eval", "--beliefs", SEED,
                       "--cases", str(bad))  # fmt: skip
    assert code == 1 and "cases file" in err and "not valid JSON" in err
    assert "Traceback" not in err


def test_context_json_lists_each_layer_in_rank_order(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "import", SEED)[0] == 0
    code, out, _ = run(
        capsys, "context", "--user", "sample-user", "--scope", "domain:code",
        "--query", "how should VueJS components retry failed requests?", "--json",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"persona", "pinned", "relevant", "open_questions", "budget"}
    assert {b["id"] for b in data["relevant"]} == {"b-vue-entity", "b-retry-policy"}
    assert all(b["score"] >= 3 and b["clauses"] for b in data["relevant"])
    assert data["relevant"][0]["score"] >= data["relevant"][1]["score"]
    assert "b-db-postgres" in [b["id"] for b in data["pinned"]]
    assert [b["id"] for b in data["open_questions"]] == ["b-auth-open-q"]
    assert data["relevant"][0]["canonical_name"] and "change_log" not in data["relevant"][0]


def test_context_as_of_answers_what_was_believed_then(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    t1, t2 = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)
    with open_store(home / "tenure.duckdb") as store:
        old = store.create(Belief(user_id="u", canonical_name="queue_rabbitmq", aliases=["queue"],
                                  scope=["domain:code"], created_at=t1, updated_at=t1))  # fmt: skip
        store.supersede(old.id, Belief(user_id="u", canonical_name="queue_kafka",
                                       aliases=["queue"], scope=["domain:code"]))  # fmt: skip
    base = ["context", "--user", "u", "--scope", "domain:code", "--query", "the queue", "--json"]
    then = json.loads(run(capsys, *base, "--as-of", t2.isoformat())[1])
    now = json.loads(run(capsys, *base)[1])
    assert [b["canonical_name"] for b in then["relevant"]] == ["queue_rabbitmq"]
    assert [b["canonical_name"] for b in now["relevant"]] == ["queue_kafka"]
    code, _, err = run(capsys, *base, "--as-of", "last tuesday")
    assert code == 1 and "'last tuesday' is not an ISO time" in err


def test_rules_commands_add_edit_list_delete(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "rules", "add", "domain:faq", "--bonus", "0.4",
                         "--template", "Official answers:",
                         "--memory-class", "semantic")  # fmt: skip
    assert code == 0 and "warning: bonus 0.4 is above 0.3" in err
    rule_id = out.split()[2]
    assert run(capsys, "rules", "edit", rule_id, "--bonus", "0.2")[0] == 0
    listed = json.loads(run(capsys, "rules", "list", "--json")[1])
    mine = next(r for r in listed if r["id"] == rule_id)
    assert (mine["pattern"], mine["bonus"], mine["template"]) == (
        "domain:faq",
        0.2,
        "Official answers:",
    )
    assert {"user:universal", "project:*", "domain:docs"} <= {r["pattern"] for r in listed}
    assert run(capsys, "rules", "delete", rule_id)[0] == 0
    assert rule_id not in run(capsys, "rules", "list")[1]
    code, _, err = run(capsys, "rules", "add", "nonsense")
    assert code == 1 and "rule pattern 'nonsense'" in err
    code, _, err = run(capsys, "rules", "delete", "r-missing")
    assert code == 1 and "no rule with id 'r-missing'" in err


def test_context_text_says_the_budget_in_words(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "import", SEED)[0] == 0
    base = ["context", "--user", "sample-user", "--scope", "domain:code", "--query", "VueJS"]
    code, out, _ = run(capsys, *base)
    assert code == 0
    [line] = [line for line in out.splitlines() if line.startswith("budget:")]
    assert "of none" not in line and "shed none" not in line and line.endswith("shed nothing")
    code, out, _ = run(capsys, *base, "--token-budget", "5")
    [line] = [line for line in out.splitlines() if line.startswith("budget:")]
    assert "tokens used of 5; shed b-" in line and "['" not in line
