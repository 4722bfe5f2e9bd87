"""Two `tenure serve` processes on one PostgreSQL database are two replicas of one memory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from beliefs.opening import open_store
from proxy.cli.main import main
from tests.extractor.fake_llm import extraction, new_belief
from tests.fakes.upstream import Chat, FakeUpstream
from tests.postgres_server import PostgresServer
from tests.proxy.cli.test_cli_server import start_tenure, stop_tenure
from tests.proxy.gateway.test_extraction_crash import is_extraction
from tests.proxy.ui.conftest import _META_TOKEN

ALICE = {"X-Tenure-User": "alice", "X-Tenure-Scope": "domain:code"}


def eventually(check: Callable[[], Any], timeout: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError("the other replica never saw the change")
        time.sleep(0.02)


Procs = dict[str, subprocess.Popen[bytes]]


def start_pair(
    root: Path,
    url: str,
    upstream_url: str,
    only: dict[str, dict[str, str]] | None = None,
    **env: str,
) -> tuple[Procs, dict[str, str]]:
    """Replicas `a` and `b` of `tenure serve` on the database `url`: processes and base URLs;
    `only` adds settings to one of them."""
    procs: Procs = {}
    bases: dict[str, str] = {}
    for name in ("a", "b"):
        proc, port = start_tenure(
            root / name,
            upstream_url,
            TENURE_DATABASE_URL=url,
            TENURE_REPLICA_ID=name,
            TENURE_RETRIEVAL_TIMEOUT_MS="5000",  # a loaded machine must not drop memory by chance
            **{**env, **(only or {}).get(name, {})},
        )
        procs[name], bases[name] = proc, f"http://127.0.0.1:{port}"
    return procs, bases


def stop_pair(procs: Procs) -> None:
    for proc in procs.values():
        if proc.poll() is None:
            stop_tenure(proc)


@pytest.fixture
def replicas(
    tmp_path: Path, postgres: PostgresServer, upstream_server: FakeUpstream
) -> Iterator[tuple[str, str]]:
    procs, bases = start_pair(tmp_path, postgres.new_database(), upstream_server.url)
    yield bases["a"], bases["b"]
    stop_pair(procs)


def injected(upstream: FakeUpstream, base: str, question: str) -> str:
    """What the upstream was sent for a chat through `base` (the memory is in its prompt)."""
    upstream.reset()
    body = {"model": "m", "messages": [{"role": "user", "content": question}]}
    resp = httpx.post(f"{base}/v1/chat/completions", json=body, headers=ALICE, timeout=30)
    assert resp.status_code == 200, resp.text
    return upstream.requests[-1].body.decode()


def test_a_belief_written_through_one_replica_is_injected_through_the_other(
    replicas: tuple[str, str], upstream_server: FakeUpstream
) -> None:
    a, b = replicas
    belief = {
        "user_id": "alice",
        "canonical_name": "billing_queue",
        "aliases": ["queue"],
        "content": "Billing events go through RabbitMQ.",
        "scope": ["domain:code"],
    }
    made = httpx.post(f"{a}/api/beliefs", json=belief, timeout=10)
    assert made.status_code == 201, made.text
    bid = made.json()["id"]
    eventually(lambda: httpx.get(f"{b}/api/beliefs/{bid}").status_code == 200)
    assert "RabbitMQ" in injected(upstream_server, a, "Which queue does billing use?")
    assert "RabbitMQ" in injected(upstream_server, b, "Which queue does billing use?")

    edit = {"content": "Billing events go through Kafka now."}
    assert httpx.patch(f"{b}/api/beliefs/{bid}", json=edit, timeout=10).status_code == 200
    eventually(lambda: "Kafka" in httpx.get(f"{a}/api/beliefs/{bid}").json()["content"])
    sent = injected(upstream_server, a, "Which queue does billing use?")
    assert "Kafka" in sent and "RabbitMQ" not in sent

    health = httpx.get(f"{b}/healthz").json()["replica"]
    assert (health["backend"], health["id"]) == ("postgresql", "b")
    assert health["change_feed"]["listening"] is True
    assert (
        eventually(lambda: httpx.get(f"{a}/healthz").json()["replica"]["change_feed"])[
            "lag_changes"
        ]
        == 0
    )


def test_workers_share_one_port_on_postgresql(
    tmp_path: Path, postgres: PostgresServer, upstream_server: FakeUpstream
) -> None:
    url = postgres.new_database()
    proc, port = start_tenure(
        tmp_path / "w", upstream_server.url, "--workers", "2", TENURE_DATABASE_URL=url
    )
    try:
        seen = set()
        deadline = time.monotonic() + 120  # a bound for a hang, not a margin
        while len(seen) < 2 and time.monotonic() < deadline:
            with httpx.Client() as client:  # a new connection each time: any worker may take it
                seen.add(client.get(f"http://127.0.0.1:{port}/healthz").json()["replica"]["id"])
        assert len(seen) == 2 and all(s.endswith(("-w0", "-w1")) for s in seen)
    finally:
        stop_tenure(proc)


def test_workers_are_refused_on_duckdb(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TENURE_HOME", str(tmp_path))
    monkeypatch.delenv("TENURE_DATABASE_URL", raising=False)
    assert main(["serve", "--workers", "2"]) == 1
    err = capsys.readouterr().err
    assert "--workers 2 needs a PostgreSQL store" in err and "TENURE_DATABASE_URL" in err


def test_kill_9_mid_extraction_leaves_the_job_to_the_other_replica_and_one_belief(
    tmp_path: Path, postgres: PostgresServer, upstream: FakeUpstream
) -> None:
    url = postgres.new_database()
    reply = json.dumps(extraction(new_beliefs=[new_belief("cache_store", "Uses Redis.")]))
    # The first extraction call is held open (until its caller dies); the next is answered.
    upstream.queue(
        Chat(content=reply, match=is_extraction, delay=120),
        Chat(content=reply, match=is_extraction),
    )
    # Only `a` extracts until it is killed, and `c`, the replica that takes over, starts after
    # that: no lease can run out early on a loaded machine and move the job before the kill.
    procs, bases = start_pair(
        tmp_path,
        url,
        upstream.url,
        TENURE_EXTRACT_WORKERS="0",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        only={"a": {"TENURE_EXTRACT_WORKERS": "1"}},
    )
    try:
        chat = {"model": "stand-in-model", "messages": [{"role": "user", "content": "Redis!"}]}
        resp = httpx.post(f"{bases['b']}/v1/chat/completions", json=chat, headers=ALICE, timeout=30)
        assert resp.status_code == 200, resp.text
        eventually(lambda: any(is_extraction(r) for r in upstream.requests), timeout=120)
        [lease] = eventually(
            lambda: httpx.get(f"{bases['b']}/healthz").json()["replica"]["job_leases"]
        )
        assert (lease["replica"], lease["mine"]) == ("a", False)
        os.kill(procs["a"].pid, signal.SIGKILL)
        procs["a"].communicate(timeout=10)  # reaped, its pipe closed

        [seen] = httpx.get(f"{bases['b']}/healthz").json()["replica"]["job_leases"]
        assert (seen["job_id"], seen["replica"], seen["mine"]) == (lease["job_id"], "a", False)

        # A lease of a second: the dead replica's claim is older than that when `c` is up.
        procs["c"], _port = start_tenure(
            tmp_path / "c",
            upstream.url,
            TENURE_DATABASE_URL=url,
            TENURE_REPLICA_ID="c",
            TENURE_EXTRACT_WORKERS="1",
            TENURE_EXTRACT_LEASE="1",
            LITELLM_LOCAL_MODEL_COST_MAP="True",
        )

        def done() -> list[Any]:
            jobs = httpx.get(f"{bases['b']}/api/jobs", params={"status": "done"}, timeout=5)
            return list(jobs.json())

        eventually(done, timeout=120)
        assert httpx.get(f"{bases['b']}/healthz").json()["replica"]["job_leases"] == []
    finally:
        stop_pair(procs)
    with open_store(url) as store:
        beliefs = store.list(user_id="alice", include_superseded=True)
        assert [b.canonical_name for b in beliefs] == ["cache_store"]
        jobs = store.execute("SELECT id, status, attempts FROM jobs").fetchall()
        assert jobs == [(lease["job_id"], "done", 2)]
    assert sum(1 for r in upstream.requests if is_extraction(r)) == 2


KEY = "sk-shared-key"


@pytest.fixture
def keyed_replicas(
    tmp_path: Path, postgres: PostgresServer, upstream_server: FakeUpstream
) -> Iterator[tuple[str, str]]:
    procs, bases = start_pair(
        tmp_path, postgres.new_database(), upstream_server.url, TENURE_API_KEY=KEY
    )
    yield bases["a"], bases["b"]
    stop_pair(procs)


def csrf_from(base: str) -> tuple[str, str]:
    """The CSRF cookie a replica's login page sets, and the token its form carries."""
    page = httpx.get(f"{base}/login", timeout=10)
    found = _META_TOKEN.search(page.text)
    assert found, page.text[:300]
    return page.cookies["tenure_csrf"], found.group(1)


def logged_in(base: str) -> tuple[dict[str, str], str]:
    """A browser session made on a replica with the access key: its cookies and CSRF token."""
    cookie, token = csrf_from(base)
    login = httpx.post(
        f"{base}/login",
        data={"csrf_token": token, "key": KEY, "next": "/beliefs"},
        cookies={"tenure_csrf": cookie},
        timeout=10,
    )
    assert login.status_code == 303, login.text
    return {"tenure_csrf": cookie, "tenure_session": login.cookies["tenure_session"]}, token


def test_a_login_logout_and_csrf_token_hold_on_either_replica(
    keyed_replicas: tuple[str, str],
) -> None:
    a, b = keyed_replicas
    jar, token = logged_in(a)
    assert httpx.get(f"{b}/api/beliefs", cookies=jar, timeout=10).status_code == 200
    # A's CSRF token is good on B: the double-submit cookie needs no server state.
    belief = {"user_id": "alice", "canonical_name": "ci", "content": "CI runs on Buildkite."}
    made = httpx.post(
        f"{b}/api/beliefs", json=belief, cookies=jar, headers={"x-csrf-token": token}, timeout=10
    )
    assert made.status_code == 201, made.text
    forged = httpx.post(f"{b}/api/beliefs", json=belief, cookies=jar, timeout=10)
    assert forged.status_code == 403

    out = httpx.post(f"{a}/logout", data={"csrf_token": token}, cookies=jar, timeout=10)
    assert out.status_code == 303
    assert httpx.get(f"{a}/api/beliefs", cookies=jar, timeout=10).status_code == 401
    eventually(lambda: httpx.get(f"{b}/api/beliefs", cookies=jar, timeout=10).status_code == 401)


def test_wrong_keys_on_both_replicas_count_together(keyed_replicas: tuple[str, str]) -> None:
    a, b = keyed_replicas
    wrong = {"authorization": "Bearer guess"}
    right = {"authorization": f"Bearer {KEY}"}
    for base in (a, b):  # ten in all, the limit, five on each
        for _ in range(5):
            assert httpx.get(f"{base}/api/beliefs", headers=wrong, timeout=10).status_code == 401
    for base in (a, b):
        refused = eventually(
            lambda base=base: (
                httpx.get(f"{base}/api/beliefs", headers=right, timeout=10).status_code == 429
            )
        )
        assert refused
