"""`tenure tokens create|list|revoke`: on the home's database, and through the running server."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from proxy.cli.main import main
from tests.fakes.upstream import FakeUpstream
from tests.proxy.cli.test_cli_server import start_tenure, stop_tenure

ASK = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_tokens_made_on_the_database_then_revoked_through_the_server(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    upstream_server: FakeUpstream,
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("TENURE_HOME", str(home))
    code, out, err = run(capsys, "tokens", "create", "--operator")
    assert code == 0 and "shown only now" in err
    operator = out.strip()
    code, out, err = run(
        capsys, "tokens", "create", "--user", "alice", "--agent", "coder", "--scope", "project:*"
    )
    assert code == 0 and "for user alice, as agent coder, in scopes project:*" in err
    alice = out.strip()
    assert alice.startswith("tnr_") and alice != operator
    code, out, _ = run(capsys, "tokens", "list", "--json")
    listed = json.loads(out)
    assert [t["kind"] for t in listed] == ["operator", "client"]
    assert alice not in out and operator not in out  # only hashes are kept
    code, _, err = run(capsys, "tokens", "create", "--user", "bob", "--scope", "bogus")
    assert code == 1 and "scope pattern 'bogus'" in err

    proc, port = start_tenure(home, upstream_server.url)
    try:
        base = f"http://127.0.0.1:{port}"
        alice_headers = {"Authorization": f"Bearer {alice}", "X-Tenure-Scope": "project:x"}
        chat = f"{base}/v1/chat/completions"
        assert httpx.post(chat, json=ASK, headers=alice_headers).status_code == 200
        assert httpx.get(f"{base}/api/beliefs").status_code == 401  # tokens turned access on
        monkeypatch.setenv("TENURE_TOKEN", operator)  # the CLI's way into the server
        code, out, err = run(capsys, "tokens", "revoke", listed[1]["id"])
        assert code == 0 and "using its API" in err and f"revoked token {listed[1]['id']}" in out
        refused = httpx.post(chat, json=ASK, headers=alice_headers)
        assert refused.status_code == 401 and "was revoked" in refused.json()["error"]["message"]
    finally:
        stop_tenure(proc)
