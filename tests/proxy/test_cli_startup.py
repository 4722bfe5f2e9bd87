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
    "beliefs.context",
    "mcp",
)


def test_beliefs_list_imports_neither_the_gateway_nor_the_models(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "from proxy.cli.main import main\n"
        "main(['beliefs', 'list'])\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "TENURE_HOME": str(home)},
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert "proxy.cli.store" in loaded
    extra = [m for m in loaded if any(m == n or m.startswith(f"{n}.") for n in NOT_NEEDED)]
    assert extra == []
