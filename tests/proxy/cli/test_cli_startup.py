"""A command imports what it needs: start-up is mostly imports, paid on every command."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

from proxy.cli.main import COMMAND_MODULES, COMMANDS
from tests.fakes.upstream import FakeUpstream
from tests.proxy.cli.test_cli_server import start_tenure, stop_tenure


def test_the_command_table_names_each_commands_module() -> None:
    registered: dict[str, str] = {}
    for name in COMMAND_MODULES:
        subparsers = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(name).register(subparsers)
        registered.update(dict.fromkeys(subparsers.choices, name))
    assert registered == COMMANDS


# Neither the gateway, the model client, compaction nor retrieval is needed to list beliefs.
NOT_NEEDED = (
    "starlette",
    "uvicorn",
    "proxy.gateway",
    "extractor.llm",
    "extractor.worker",
    "compaction.runner",
    "beliefs.context.assembly",
    "mcp",
)


def imported_by_beliefs_list(home: Path) -> list[str]:
    """The modules `tenure beliefs list` imported, run in a process of its own on `home`."""
    code = (
        "import json, sys\n"
        "from proxy.cli.main import main\n"
        "assert main(['beliefs', 'list']) == 0\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "TENURE_HOME": str(home)},
        capture_output=True,
        text=True,
        check=True,
    )
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    assert "proxy.cli.store" in loaded
    return loaded


def among(loaded: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in loaded if any(m == n or m.startswith(f"{n}.") for n in names)]


def test_beliefs_list_imports_neither_the_gateway_nor_the_models(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert among(imported_by_beliefs_list(home), NOT_NEEDED) == []


def test_through_a_running_server_it_imports_no_database_driver(
    tmp_path: Path, upstream_server: FakeUpstream
) -> None:
    proc, _ = start_tenure(tmp_path / "home", upstream_server.url)
    try:
        loaded = imported_by_beliefs_list(tmp_path / "home")
    finally:
        stop_tenure(proc)
    assert among(loaded, ("duckdb", "psycopg", "psycopg_pool", "beliefs.store.belief_store")) == []
