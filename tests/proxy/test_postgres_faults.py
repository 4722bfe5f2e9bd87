"""Two replicas under load while PostgreSQL drops every connection or stops for a while: no
turn is lost, both recover alone, and /healthz shows the outage and then ok again."""

from __future__ import annotations

import re
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.fakes.upstream import FakeUpstream
from tests.postgres_server import PostgresServer, postgres_bin
from tests.proxy.gateway.test_replicas import ALICE, KEY, Procs, eventually, logged_in, start_pair

MARK = re.compile(r"turn-\d{5}")


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[PostgresServer]:
    """A server of this module's own, so stopping it disturbs no other test."""
    bin_dir = postgres_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/pg_ctl)")
    server = PostgresServer(bin_dir).start()
    yield server
    server.stop()


class Load:
    """A client thread sending turns to both replicas in turn, each naming itself."""

    def __init__(self, bases: list[str]) -> None:
        self.bases = bases
        self.answered: list[str] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)

    def _run(self) -> None:
        with httpx.Client(timeout=60) as client:
            n = 0
            while not self._stop.is_set():
                mark = f"turn-{n:05d}"
                body = {"model": "m", "messages": [{"role": "user", "content": f"Note {mark}."}]}
                base = self.bases[n % len(self.bases)]
                try:
                    resp = client.post(f"{base}/v1/chat/completions", json=body, headers=ALICE)
                except httpx.HTTPError as exc:
                    self.failures.append(f"{mark}: {exc!r}")
                else:
                    if resp.status_code == 200:
                        self.answered.append(mark)
                    else:
                        self.failures.append(f"{mark}: {resp.status_code} {resp.text[:200]}")
                n += 1

    def more(self, count: int, timeout: float = 60) -> None:
        """Wait until `count` more turns have been answered."""
        target = len(self.answered) + count
        eventually(lambda: len(self.answered) >= target, timeout)


def stored_marks(url: str) -> set[str]:
    """The turns whose extraction job the jobs table holds."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT turn::text FROM jobs").fetchall()
    return {mark for (turn,) in rows for mark in MARK.findall(turn)}


def health(base: str) -> tuple[int, dict[str, Any]]:
    resp = httpx.get(f"{base}/healthz", timeout=60)
    return resp.status_code, resp.json()


def healthy(base: str) -> bool:
    code, body = health(base)
    return code == 200 and body["writes"]["ok"] and body["writes"]["kept"] == 0


def feed_follows(a: str, b: str, name: str) -> None:
    """A belief written through `a` reaches `b`'s memory (its change feed is back)."""
    belief = {"user_id": "alice", "canonical_name": name, "content": f"{name} holds."}
    made = eventually(
        lambda: (
            (r := httpx.post(f"{a}/api/beliefs", json=belief, timeout=30)).status_code == 201 and r
        ),
        timeout=60,
    )
    bid = made.json()["id"]
    eventually(lambda: httpx.get(f"{b}/api/beliefs/{bid}", timeout=30).status_code == 200, 60)


@dataclass
class Pair:
    url: str
    procs: Procs
    a: str
    b: str
    load: Load

    def no_turn_lost(self) -> None:
        """Every answered turn's job reached the table; neither replica logged a lost write."""
        self.load.stop()
        assert self.load.failures == []
        answered = set(self.load.answered)
        eventually(lambda: answered <= stored_marks(self.url), timeout=60)
        logs = {name: _stopped(proc) for name, proc in self.procs.items()}
        for name, log in logs.items():
            assert "LOST" not in log and "Traceback" not in log, f"{name}: {log[-3000:]}"


@pytest.fixture
def pair(
    tmp_path: Path, own_postgres: PostgresServer, upstream_server: FakeUpstream
) -> Iterator[Pair]:
    """Two replicas on a new database, under load (ten turns answered already)."""
    url = own_postgres.new_database()
    # An extraction worker on each, its model unreachable: the jobs stay in the table to be
    # counted, while the worker still reads the store every second.
    procs, bases = start_pair(
        tmp_path,
        url,
        upstream_server.url,
        TENURE_EXTRACT_WORKERS="1",
        TENURE_EXTRACT_API_BASE="http://127.0.0.1:9/v1",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        # Few writes kept in memory: past them the jobs wait in the journal only, and must
        # still reach the table once the store is back, without a restart.
        TENURE_WRITE_KEEP_MAX="8",
    )
    load = Load([bases["a"], bases["b"]])
    load.start()
    try:
        load.more(10)
        yield Pair(url, procs, bases["a"], bases["b"], load)
    finally:
        load.stop()
        for proc in procs.values():
            _stopped(proc)


def _stopped(proc: subprocess.Popen[bytes]) -> str:
    """Stop a replica (if still running); what it logged."""
    if proc.poll() is not None:
        return ""
    proc.terminate()
    return proc.communicate(timeout=30)[1].decode()


def test_every_connection_killed_under_load_loses_no_turn(pair: Pair) -> None:
    with psycopg.connect(pair.url, autocommit=True) as conn:
        killed = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE usename = 'tenure' AND pid <> pg_backend_pid()"
        ).fetchone()
    assert killed and killed[0] >= 4  # each replica's store and change feed
    pair.load.more(20)
    feed_follows(pair.a, pair.b, "after_the_kill")
    feed_follows(pair.b, pair.a, "after_the_kill_back")
    assert eventually(lambda: healthy(pair.a) and healthy(pair.b), timeout=60)
    pair.no_turn_lost()


def test_postgresql_stopped_under_load_loses_no_turn_and_both_replicas_recover(
    own_postgres: PostgresServer, pair: Pair
) -> None:
    own_postgres.halt()
    try:
        pair.load.more(40)  # answered while the store is away: more than the writes kept
        for base in (pair.a, pair.b):
            # Refused writes are kept for another try and said: turns keep coming meanwhile.
            code, body = eventually(lambda base=base: _refusing(base), timeout=60)
            assert code == 503 and body["status"] == "degraded", body
            assert "PostgreSQL" in " ".join(body["reasons"]), body
            # The turns the store has not taken yet are the backlog, counted from memory.
            assert body["jobs"]["pending"] >= body["jobs"]["in_memory"] > 0, body
            # Extraction notices too, and waits (said once in the log, no traceback).
            eventually(
                lambda base=base: health(base)[1]["extractor"]["waiting_for_store"], timeout=60
            )
    finally:
        own_postgres.resume()
    pair.load.more(10)
    assert eventually(lambda: healthy(pair.a) and healthy(pair.b), timeout=60)
    feed_follows(pair.a, pair.b, "after_the_restart")
    pair.no_turn_lost()


def _refusing(base: str) -> tuple[int, dict[str, Any]] | None:
    code, body = health(base)
    return (code, body) if not body["writes"]["ok"] else None


def test_a_logout_while_postgresql_is_stopped_ends_the_session_on_the_other_replica(
    tmp_path: Path, own_postgres: PostgresServer, upstream_server: FakeUpstream
) -> None:
    procs, bases = start_pair(
        tmp_path, own_postgres.new_database(), upstream_server.url, TENURE_API_KEY=KEY
    )
    a, b = bases["a"], bases["b"]
    try:
        jar, token = logged_in(a)
        assert httpx.get(f"{b}/api/beliefs", cookies=jar, timeout=10).status_code == 200
        own_postgres.halt()
        try:
            out = httpx.post(f"{a}/logout", data={"csrf_token": token}, cookies=jar, timeout=30)
            assert out.status_code == 303
            # The logout waits on replica a until the store is back: b has not heard of it.
            eventually(lambda: not health(a)[1]["writes"]["ok"] or health(a)[0] == 503, 60)
        finally:
            own_postgres.resume()
        eventually(
            lambda: httpx.get(f"{b}/api/beliefs", cookies=jar, timeout=10).status_code == 401,
            timeout=60,
        )
    finally:
        for proc in procs.values():
            _stopped(proc)
