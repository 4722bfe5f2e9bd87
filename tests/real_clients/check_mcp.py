"""Check the memory tools with the real Claude Code: `python tests/real_clients/check_mcp.py`.

Starts a stand-in Anthropic provider scripted to call `recall` and then `remember` through the
tools Claude Code exposes for the `tenure` MCP server (`mcp__tenure__recall`,
`mcp__tenure__remember`), a real `tenure serve` over it (one on_demand belief seeded), adds the
server to an isolated Claude Code config with `claude mcp add --transport http tenure …/mcp`,
runs `claude -p` against the gateway, and prints the audit rows the calls left. Exits 1 when
a tool call is missing or failed. Needs `claude` on PATH; no network.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from beliefs.model.models import Belief  # noqa: E402
from beliefs.opening import open_store  # noqa: E402
from tests.fakes.upstream import Chat, FakeUpstream, Recorded  # noqa: E402

RECALL = "mcp__tenure__recall"
REMEMBER = "mcp__tenure__remember"
PROMPT = "How do we deploy? Also remember that releases happen on Tuesdays."


def _tool_results(rec: Recorded) -> set[str]:
    """The tool_use ids the request answers with tool_result blocks."""
    body = rec.json or {}
    ids: set[str] = set()
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            ids |= {b.get("tool_use_id", "") for b in content if b.get("type") == "tool_result"}
    return ids


def _offers(rec: Recorded, tool: str) -> bool:
    return any(t.get("name") == tool for t in (rec.json or {}).get("tools", []) or [])


def script(upstream: FakeUpstream) -> None:
    """recall first, remember once recall's result came back, then a plain answer."""
    upstream.queue(
        Chat(
            content="",
            tool_calls=[
                {"id": "toolu_recall", "name": RECALL, "arguments": '{"query": "runbook"}'}
            ],
            match=lambda r: _offers(r, RECALL) and not _tool_results(r),
        ),
        Chat(
            content="",
            tool_calls=[
                {
                    "id": "toolu_remember",
                    "name": REMEMBER,
                    "arguments": json.dumps(
                        {
                            "statement": "Releases happen on Tuesdays.",
                            "why_it_matters": "Plan release steps for a Tuesday.",
                            "aliases": ["releases", "release day"],
                            "type": "decision",
                        }
                    ),
                }
            ],
            match=lambda r: "toolu_recall" in _tool_results(r),
        ),
        Chat(
            content="Deploys follow the blue-green runbook; noted that releases are on Tuesdays.",
            match=lambda r: "toolu_remember" in _tool_results(r),
        ),
    )


def wait_for(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def run(port: int) -> int:
    claude = shutil.which("claude")
    if claude is None:
        print("claude is not on PATH: npm install -g @anthropic-ai/claude-code", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="tenure-check-mcp-"))
    home = work / "tenure"
    with open_store(home / "tenure.duckdb") as store:
        seeded = store.create(
            Belief(
                user_id="alice",
                canonical_name="deploy_runbook",
                aliases=["runbook", "deploy"],
                content="Deploys follow the blue-green runbook in ops/deploy.md.",
                why_it_matters="Walk through the runbook before any deploy.",
                delivery="on_demand",
            )
        )
    base = f"http://127.0.0.1:{port}"
    with FakeUpstream() as upstream:
        script(upstream)
        env = {
            **os.environ,
            "TENURE_HOME": str(home),
            "TENURE_PORT": str(port),
            "TENURE_UPSTREAM_URL": f"{upstream.url}",
            "TENURE_ANTHROPIC_UPSTREAM_URL": upstream.base,
            "TENURE_EXTRACT_WORKERS": "0",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        server = subprocess.Popen(
            [sys.executable, "-m", "proxy.cli.main", "serve"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=open(work / "serve.log", "w"),  # noqa: SIM115
        )
        try:
            wait_for(f"{base}/healthz")
            rows = drive_claude(claude, work, base)
        finally:
            server.terminate()
            server.wait(15)
        print(f"stand-in provider received {len(upstream.requests)} request(s)")
    print(f"seeded on_demand belief {seeded.id} (deploy_runbook)")
    print("audit rows (GET /api/mcp/calls):")
    for row in rows:
        print(json.dumps(row, ensure_ascii=False))
    tools = {(r["tool"], r["ok"]) for r in rows}
    recalled = any(seeded.id in r["belief_ids"] for r in rows if r["tool"] == "recall")
    ok = {("recall", True), ("remember", True)} <= tools and recalled
    print("OK" if ok else "FAILED: expected a successful recall (finding the seed) and remember")
    return 0 if ok else 1


def drive_claude(claude: str, work: Path, base: str) -> list[dict[str, Any]]:
    """Add the MCP server to a throwaway Claude Code config, run one prompt, read the audit."""
    env = {
        **os.environ,
        "HOME": str(work / "home"),
        "ANTHROPIC_BASE_URL": base,
        "ANTHROPIC_API_KEY": "sk-ant-stand-in",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    (work / "home").mkdir()
    add = [claude, "mcp", "add", "--transport", "http", "-s", "user", "tenure", f"{base}/mcp"]
    add += ["--header", "X-Tenure-User: alice"]
    subprocess.run(add, env=env, cwd=work, check=True, timeout=120)
    print("$ " + " ".join(add))
    listed = subprocess.run(
        [claude, "mcp", "list"], env=env, cwd=work, capture_output=True, text=True, timeout=120
    )
    print(listed.stdout.strip())
    answer = subprocess.run(
        [claude, "-p", PROMPT, "--allowedTools", f"{RECALL},{REMEMBER}"],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
    )
    print(f"claude -p exited {answer.returncode}: {answer.stdout.strip()[:400]}")
    if answer.stderr.strip():
        print(f"stderr: {answer.stderr.strip()[:800]}")
    with urllib.request.urlopen(f"{base}/api/mcp/calls?user=alice") as response:
        rows: list[dict[str, Any]] = json.loads(response.read())
    return list(reversed(rows))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=5860, help="the gateway's port")
    return run(parser.parse_args().port)


if __name__ == "__main__":
    sys.exit(main())
