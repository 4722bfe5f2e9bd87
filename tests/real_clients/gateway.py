"""A `tenure serve` process over the stand-in provider, and the real clients pointed at it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from tests.fakes.upstream import FakeUpstream

FAKE_KEY = "sk-standin-not-a-key"
# A realistic store holds more than one belief: BM25 needs a corpus to find a term rare.
BACKGROUND = [
    ("editor_choice", "Edits code in Helix."),
    ("shell_choice", "Uses fish as the shell."),
    ("ci_provider", "CI runs on GitHub Actions."),
    ("code_style", "Prefers small pure functions."),
    ("docs_tool", "Writes docs in MkDocs."),
    ("cloud_region", "Deploys to eu-west."),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Gateway:
    """A `tenure serve` process over the stand-in, in a temporary TENURE_HOME."""

    def __init__(self, upstream: FakeUpstream, home: Path, workdir: Path) -> None:
        """`workdir`: where the clients run (their tools read files there)."""
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "TENURE_HOME": str(home / "tenure"),
            "TENURE_PORT": str(self.port),
            "TENURE_UPSTREAM_URL": upstream.url,
            "TENURE_EXTRACT_BACKOFF_S": "0.2",
            "TENURE_LOG_LEVEL": "warning",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
        }
        self.log = open(home / "gateway.log", "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from proxy.cli.main import main; sys.exit(main())",
                "serve",
            ],
            env=env,
            stderr=self.log,
            stdout=self.log,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                health = httpx.get(f"{self.url}/healthz", timeout=1)
                if health.status_code == 200 and not health.json()["loading"]:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError(f"the gateway did not start; see {home / 'gateway.log'}")

    def beliefs(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = httpx.get(f"{self.url}/api/beliefs", timeout=30).json()
        return found

    def jobs(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = httpx.get(f"{self.url}/api/jobs", timeout=30).json()
        return found

    def settled_jobs(self, about: str, timeout: float = 120) -> list[dict[str, Any]]:
        """The jobs whose user message holds `about`, once there is one and none is pending or
        running (a turn's job is written after its final answer: the client has exited by
        then, so every job of its requests exists)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                every = httpx.get(f"{self.url}/api/jobs?limit=1000", timeout=30).json()
            except httpx.TimeoutException:
                continue  # the gateway is busy extracting: ask again
            busy = any(job["status"] in ("pending", "running") for job in every)
            mine = [job for job in every if about in (job["turn"].get("user_message") or "")]
            if mine and not busy:
                return mine
            time.sleep(0.3)
        return []

    def seed(self) -> None:
        for name, content in BACKGROUND:
            body = {"canonical_name": name, "content": content, "scope": ["user:universal"]}
            httpx.post(f"{self.url}/api/beliefs", json=body, timeout=10).raise_for_status()

    def wait_for_belief(self, name: str, timeout: float = 60) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                for belief in self.beliefs():
                    if belief["canonical_name"] == name:
                        return belief
            except httpx.TimeoutException:
                pass  # the gateway is busy (its first extraction loads LiteLLM): ask again
            time.sleep(0.3)
        return None

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(20)
        self.log.close()


# -- the clients --------------------------------------------------------------------------------


def run_client(command: list[str], workdir: Path, env: dict[str, str]) -> str:
    """Run one client command to its end; what it printed."""
    done = subprocess.run(
        command,
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    return (done.stdout + done.stderr).strip()


def run_claude(gateway: Gateway, workdir: Path, home: Path, prompt: str, model: str | None) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": gateway.url,
        "ANTHROPIC_API_KEY": FAKE_KEY,
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }
    command = ["claude", "-p", prompt]
    if model:
        command += ["--model", model]
    return run_client(command, workdir, env)


def run_codex(gateway: Gateway, workdir: Path, home: Path, prompt: str) -> str:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model_provider = "tenure"\n\n'
        "[model_providers.tenure]\n"
        'name = "Tenure"\n'
        f'base_url = "{gateway.url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "TENURE_CLIENT_KEY"\n'
    )
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "TENURE_CLIENT_KEY": FAKE_KEY,
    }
    command = ["codex", "exec", "--skip-git-repo-check", "--sandbox", "read-only", prompt]
    return run_client(command, workdir, env)


def run_agents(gateway: Gateway, prompt: str) -> str:
    code = (
        "import asyncio, sys\n"
        "from agents import Agent, Runner, function_tool, set_tracing_disabled\n"
        "set_tracing_disabled(True)\n"
        "@function_tool\n"
        "def read_file(path: str) -> str:\n"
        "    with open(path) as f:\n"
        "        return f.read()\n"
        "agent = Agent(name='assistant', instructions='You are a helpful assistant.',\n"
        "              tools=[read_file])\n"
        "result = asyncio.run(Runner.run(agent, sys.argv[1]))\n"
        "print(result.final_output)\n"
    )
    env = {**os.environ, "OPENAI_BASE_URL": f"{gateway.url}/v1", "OPENAI_API_KEY": FAKE_KEY}
    return run_client([sys.executable, "-c", code, prompt], gateway.workdir, env)
