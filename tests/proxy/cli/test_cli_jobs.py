"""`tenure jobs list|retry` against a real store, and the API client's POST."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from beliefs.model.errors import BeliefNotFound
from beliefs.opening import open_store
from extractor.jobs import JobQueue, pending_job
from extractor.journal import JobJournal
from proxy.cli.api_client import ApiClient
from proxy.cli.main import main
from tests.extractor.conftest import make_turn
from tests.proxy.conftest import Gateway


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("TENURE_HOME", str(path))
    return path


@pytest.fixture
def failed_job(home: Path) -> str:
    home.mkdir()
    with open_store(home / "tenure.duckdb") as store:
        queue = JobQueue(store)
        queue.enqueue(make_turn("a turn that worked"))
        job_id = queue.enqueue(make_turn("a turn that failed"))
        queue.claim()
        queue.complete(queue.list("running")[0].id, ["b-1"], [])
        queue.claim()
        queue.fail(job_id, "ConnectionError: refused\nsecond line", None, None)
    return job_id


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_and_retry(failed_job: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "jobs", "list")
    assert (code, err) == (0, "")
    assert "2 jobs" in out and "error: ConnectionError: refused second line" in out

    code, out, _ = run(capsys, "jobs", "list", "--status", "failed", "--json")
    [job] = json.loads(out)
    assert job["id"] == failed_job and job["status"] == "failed"

    code, out, err = run(capsys, "jobs", "retry", failed_job)
    assert (code, err) == (0, "") and "pending again" in out
    code, out, _ = run(capsys, "jobs", "list", "--status", "pending", "--json")
    assert [j["id"] for j in json.loads(out)] == [failed_job]


def test_bad_input_is_a_clear_error(failed_job: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "jobs", "retry", "j-nope")
    assert code == 1 and "no job 'j-nope'" in err and "Traceback" not in err
    done = json.loads(run(capsys, "jobs", "list", "--status", "done", "--json")[1])[0]["id"]
    code, _, err = run(capsys, "jobs", "retry", done)
    assert code == 1 and "only failed or pending jobs can be retried" in err
    code, _, err = run(capsys, "jobs", "list", "--status", "stuck")
    assert code == 2 and "invalid choice" in err


def test_api_client_posts_to_the_running_server(gateway: Gateway) -> None:
    client = ApiClient(f"http://127.0.0.1:{gateway.port}")
    with pytest.raises(BeliefNotFound, match="no job 'j-nope'"):
        client.post("/api/jobs/j-nope/retry")
    job_id = gateway.on_store(lambda s: JobQueue(s).enqueue(make_turn()))
    assert client.post(f"/api/jobs/{job_id}/retry")["status"] == "pending"


def test_jobs_routes_answer_json(make_gateway: Callable[..., Gateway]) -> None:
    gateway = make_gateway()
    client = ApiClient(f"http://127.0.0.1:{gateway.port}")
    assert client.get("/api/jobs") == [] and client.get("/api/conflicts") == []


def test_list_shows_the_turns_a_dead_server_left_in_the_journal(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home.mkdir()
    journal = JobJournal(home / "journal")
    journal.append([pending_job(make_turn("the last turn before the crash"))])
    journal.close()  # the process went away before the table had the job
    code, out, err = run(capsys, "jobs", "list", "--json")
    assert (code, err) == (0, "")
    [job] = json.loads(out)
    assert job["status"] == "pending"
    assert job["turn"]["user_message"] == "the last turn before the crash"
    assert list((home / "journal").glob("jobs-*")) == []
    code, out, _ = run(capsys, "jobs", "list", "--json")
    assert len(json.loads(out)) == 1  # written once


def test_a_suspect_job_says_why(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home.mkdir()
    with open_store(home / "tenure.duckdb") as store:
        queue = JobQueue(store)
        job_id = queue.enqueue(make_turn("we deploy with Nomad"))
        queue.claim()
        queue.complete(job_id, [], [])
        queue.mark_suspect({job_id: "wrote nothing; model m failed the canary: it wrote no belief"})
    code, out, err = run(capsys, "jobs", "list")
    assert (code, err) == (0, "")
    assert "wrote 0  suspect: wrote nothing; model m failed the canary" in out
    code, out, _ = run(capsys, "jobs", "list", "--json")
    assert "failed the canary" in json.loads(out)[0]["suspect"]
