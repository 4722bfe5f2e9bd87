"""The real `tenure` CLI against a real store in a temp TENURE_HOME."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from beliefs.opening import open_store
from proxy.cli.main import main
from tests.data import SAMPLE_BELIEFS as SEED

QUEUE = ["b-queue-v0", "b-queue-v1", "b-queue-current"]


class Run:
    """Calls `main` and returns (exit code, stdout, stderr)."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys

    def __call__(self, *argv: str) -> tuple[int, str, str]:
        self.capsys.readouterr()
        code = main(list(argv))
        out, err = self.capsys.readouterr()
        return code, out, err

    def ok(self, *argv: str) -> str:
        code, out, err = self(*argv)
        assert (code, err) == (0, ""), f"tenure {' '.join(argv)} -> {code}: {err}"
        return out

    def json(self, *argv: str) -> Any:
        return json.loads(self.ok(*argv))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"  # not created yet: `import` makes it
    monkeypatch.setenv("TENURE_HOME", str(path))
    return path


@pytest.fixture
def run(home: Path, capsys: pytest.CaptureFixture[str]) -> Run:
    return Run(capsys)


@pytest.fixture
def seeded(run: Run) -> Run:
    assert run.ok("import", str(SEED)) == f"imported 20 beliefs from {SEED}\n"
    return run


def export(run: Run, *extra: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in run.ok("export", *extra).splitlines()]


def test_seed_round_trips_through_import_and_export(seeded: Run) -> None:
    exported = {b["id"]: b for b in export(seeded, "--include-superseded")}
    original = json.loads(SEED.read_text(encoding="utf-8"))
    assert len(exported) == 20
    for entry in original:
        got = exported[entry.pop("_id")]
        log = entry.pop("change_log")  # our own event shape; `--format tenure` writes theirs
        assert [e["event"] for e in got["change_log"]] == [e["type"] for e in log]
        for field, value in entry.items():
            assert got[field] == value, (got["id"], field)
        assert got["source_type"] == "import"
    live = export(seeded)
    assert len(live) == 18
    assert all(b["superseded_by"] is None for b in live)


def test_jsonl_export_reimports_identically(
    seeded: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded.ok("beliefs", "pin", "b-strict-typing")
    seeded.ok("beliefs", "delete", "b-vue-entity")
    first = seeded.ok("export", "--include-superseded", "--include-deleted")
    dump = tmp_path / "dump.jsonl"
    dump.write_text(first, encoding="utf-8")
    monkeypatch.setenv("TENURE_HOME", str(tmp_path / "other"))
    assert seeded.ok("import", str(dump)) == f"imported 20 beliefs from {dump}\n"
    assert seeded.ok("export", "--include-superseded", "--include-deleted") == first
    rows = {b["id"]: b for b in map(json.loads, first.splitlines())}
    assert [e["event"] for e in rows["b-strict-typing"]["change_log"]] == ["pinned"]
    assert [e["event"] for e in rows["b-vue-entity"]["change_log"]] == ["deleted"]
    assert rows["b-vue-entity"]["deleted_at"] is not None


def test_tenure_export_reimports(
    seeded: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenure = seeded.ok("export", "--include-superseded", "--format", "tenure")
    entries = json.loads(tenure)
    assert len(entries) == 20 and all("_id" in e for e in entries)
    path = tmp_path / "again.json"
    path.write_text(tenure, encoding="utf-8")
    monkeypatch.setenv("TENURE_HOME", str(tmp_path / "other"))
    seeded.ok("import", str(path), "--format", "tenure")
    assert seeded.ok("export", "--include-superseded", "--format", "tenure") == tenure


@pytest.mark.parametrize("member", QUEUE)
def test_chain_from_any_member_prints_the_whole_chain(seeded: Run, member: str) -> None:
    out = seeded.ok("beliefs", "chain", member)
    assert out.splitlines()[0] == " → ".join(QUEUE)
    assert "superseded by b-queue-v1 on 2026-03-01" in out
    assert "superseded by b-queue-current on 2026-07-01" in out
    assert [b["id"] for b in seeded.json("beliefs", "chain", member, "--json")] == QUEUE


def test_list_filters_and_json(seeded: Run) -> None:
    pinned = seeded.json("beliefs", "list", "--scope", "domain:code", "--pinned", "--json")
    assert {b["id"] for b in pinned} == {
        "b-db-postgres",
        "b-queue-current",
        "b-other-user-cache",
        "b-auth-open-q",
    }
    text = seeded.ok("beliefs", "list", "--type", "open_question")
    assert "b-auth-open-q" in text and text.endswith("3 beliefs\n")
    # Each line ends with what the belief says, not only its name.
    [auth] = [line for line in text.splitlines() if line.startswith("b-auth-open-q")]
    assert auth.endswith("  Still choosing between hosted and self-run login.")
    everything = seeded.json("beliefs", "list", "--include-superseded", "--json")
    assert len(everything) == 20
    assert seeded.json("beliefs", "list", "--user", "nobody", "--json") == []


def test_show_history_pin_unpin(seeded: Run) -> None:
    assert "job_queue_dramatiq" in seeded.ok("beliefs", "show", "b-queue-current")
    assert seeded.ok("beliefs", "unpin", "b-queue-current") == (
        "unpinned b-queue-current (job_queue_dramatiq)\n"
    )
    assert seeded.json("beliefs", "show", "b-queue-current", "--json")["pinned"] is False
    seeded.ok("beliefs", "pin", "b-queue-current")
    events = seeded.json("beliefs", "history", "b-queue-current", "--json")
    assert [e["event"] for e in events] == ["supersedes", "unpinned", "pinned"]
    assert "pinned by operator" in seeded.ok("beliefs", "history", "b-queue-current")


def test_delete_restore_and_hard_delete(seeded: Run) -> None:
    seeded.ok("beliefs", "delete", "b-vue-entity")
    assert "b-vue-entity" not in seeded.ok("beliefs", "list")
    assert "b-vue-entity" in seeded.ok("beliefs", "list", "--include-deleted")
    seeded.ok("beliefs", "restore", "b-vue-entity")
    assert "b-vue-entity" in seeded.ok("beliefs", "list")
    out = seeded.ok("beliefs", "delete", "b-queue-v1", "--hard")
    assert "for good" in out
    assert seeded.ok("beliefs", "chain", "b-queue-v0").splitlines()[0] == (
        "b-queue-v0 → b-queue-current"
    )
    assert seeded.json("beliefs", "history", "b-queue-v1", "--json")[-1]["detail"] == {"hard": True}
    assert seeded.ok("verify") == "ok: 19 beliefs, no problems\n"


def test_verify_reports_problems_with_exit_code_1(seeded: Run, home: Path) -> None:
    with open_store(home / "tenure.duckdb") as store:
        store.execute(
            "UPDATE beliefs SET superseded_by = 'b-queue-v0' WHERE id = ?", ["b-queue-current"]
        )
    code, out, _ = seeded("verify")
    assert code == 1 and "supersession cycle" in out
    code, out, _ = seeded("verify", "--json")
    assert code == 1 and json.loads(out)["ok"] is False


def test_verify_flags_a_directive_naming_an_option_its_belief_rules_out(
    seeded: Run, home: Path
) -> None:
    with open_store(home / "tenure.duckdb") as store:
        store.update(
            "b-chapter-length",
            {
                "content": "Keeps chapters near five thousand words.",
                "why_it_matters": "Aim drafted chapters at about 3,000 words; never 8,000 words.",
                "rejected_alternatives": ["3,000 words", "8,000 words"],
            },
        )
    code, out, _ = seeded("verify")
    # 8,000 sits in a ruled-out clause: only the option the directive tells the agent to use.
    assert code == 1 and "b-chapter-length: its directive" in out
    assert "'3,000 words'" in out and "'8,000 words'" not in out


def _bad_files() -> list[tuple[str, str, str]]:
    seed = json.loads(SEED.read_text(encoding="utf-8"))
    first = seed[0]
    ring = [
        {
            **first,
            "_id": "b-ring-a",
            "canonical_name": "ring_a",
            "superseded_by": "b-ring-b",
            "epistemic_status": "superseded",
        },
        {
            **first,
            "_id": "b-ring-b",
            "canonical_name": "ring_b",
            "superseded_by": "b-ring-a",
            "epistemic_status": "superseded",
        },
    ]
    return [
        ("broken", '[{"_id": "b-x",', "not valid JSON (line 1"),
        (
            "types",
            json.dumps([{**first, "_id": "b-new", "confidence": "high"}]),
            "entry 0 (id b-new): field confidence",
        ),
        (
            "duplicate",
            json.dumps([first, {**first, "canonical_name": "other"}]),
            "entry 1 (id b-reply-style): id: duplicates entry 0",
        ),
        ("in-store", json.dumps([first]), "id: already in the store"),
        (
            "scope",
            json.dumps([{**first, "_id": "b-new", "canonical_name": "fresh", "scope": ["code"]}]),
            "entry 0 (id b-new): field scope: scope 'code' is not one of",  # no "Value error, "
        ),
        (
            "dangling",
            json.dumps(
                [
                    {
                        **first,
                        "_id": "b-new",
                        "canonical_name": "fresh",
                        "superseded_by": "b-ghost",
                        "epistemic_status": "superseded",
                    }
                ]
            ),
            "entry 0 (id b-new): superseded_by: points to b-ghost",
        ),
        ("cycle", json.dumps(ring), "superseded_by: cycle b-ring-a -> b-ring-b -> b-ring-a"),
        (
            "clash",
            json.dumps([{**first, "_id": "b-new"}]),
            "canonical_name: 'reply_style' in user:universal is already used by live belief "
            "b-reply-style",
        ),
    ]


@pytest.mark.parametrize(
    ("name", "content", "message"), _bad_files(), ids=[b[0] for b in _bad_files()]
)
def test_bad_files_import_nothing(
    seeded: Run, tmp_path: Path, name: str, content: str, message: str
) -> None:
    before = seeded.ok("export", "--include-superseded", "--include-deleted")
    path = tmp_path / f"{name}.json"
    path.write_text(content, encoding="utf-8")
    code, out, err = seeded("import", str(path))
    assert code == 1 and out == ""
    assert err.startswith("error: ") and message in err, err
    assert "nothing was imported" in err
    assert "Traceback" not in err
    assert seeded.ok("export", "--include-superseded", "--include-deleted") == before


def test_errors_and_usage(run: Run, home: Path) -> None:
    home.mkdir()
    code, _, err = run("beliefs", "show", "b-missing")
    assert (code, err) == (
        1,
        "error: no belief with id 'b-missing'; `tenure beliefs list` shows ids\n",
    )
    code, _, err = run("import", "/nonexistent/file.json")
    assert code == 1 and "no such file" in err
    assert run("beliefs")[0] == 2
    assert run("beliefs", "list", "--type", "opinion")[0] == 2
    assert run()[0] == 2
    assert run("--help")[0] == 0


def test_bad_setting_is_a_clear_error(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENURE_PORT", "not-a-port")
    code, _, err = run("verify")
    assert code == 1 and err.startswith("error: setting port (TENURE_PORT)")


def test_locked_database_names_the_holder(
    seeded: Run, home: Path, hold_database: Callable[[Path], int]
) -> None:
    pid = hold_database(home / "tenure.duckdb")
    code, out, err = seeded("beliefs", "pin", "b-strict-typing")
    assert code == 1 and out == ""
    assert err.startswith("error: the belief database") and f"process {pid}" in err
    assert "no Tenure server is recorded in" in err and "stop that process" in err
    assert "Traceback" not in err and "IO Error" not in err


def test_read_only_reads_work(seeded: Run) -> None:
    assert len(seeded.json("beliefs", "list", "--read-only", "--json")) == 18
    code, _, err = seeded("beliefs", "list", "--read-only")
    assert code == 0 and err == ""


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (("beliefs", "list", "--limit", "-1"), "--limit: -1 is out of range; use 1 or more"),
        (("beliefs", "list", "--limit", "0"), "--limit: 0 is out of range; use 1 or more"),
        (("beliefs", "list", "--limit", "x"), "--limit: 'x' is not a whole number"),
        (("jobs", "list", "--limit", "5000"), "--limit: 5000 is out of range; use 1 to 1000"),
    ],
)
def test_cli_counts_out_of_range_are_refused_by_name(
    run: Run, argv: tuple[str, ...], said: str
) -> None:
    code, out, err = run(*argv)
    assert (code, out) == (2, "")
    assert said in err


def test_cli_context_checks_scopes_without_a_server(run: Run) -> None:
    code, out, err = run("context", "--user", "u", "--query", "x", "--scope", "Bad Scope")
    assert code == 1 and out == ""
    assert "scope 'Bad Scope' is not one of user:universal" in err


def test_a_home_that_does_not_exist_is_named_not_created(run: Run, home: Path) -> None:
    """A mistyped TENURE_HOME would otherwise read as an empty memory and leave one behind."""
    for argv in (("beliefs", "list"), ("verify",), ("export",), ("jobs", "list")):
        code, out, err = run(*argv)
        assert (code, out) == (1, ""), argv
        assert f"no Tenure home at {home} (TENURE_HOME)" in err and "check the path" in err
    assert not home.exists()
