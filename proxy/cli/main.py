"""The `tenure` command: argparse front end over the command modules in `proxy/cli/`."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from beliefs.model.errors import BeliefError
from proxy.settings import Settings, SettingsError, unknown_variables

# Which module registers each command (each exposes `register(subparsers)`; add new commands
# here). A command imports only its own module, as start-up is mostly imports; help and unknown
# commands register them all. A test checks each module registers exactly the names given here.
COMMANDS: dict[str, str] = {
    "import": "proxy.cli.store",
    "export": "proxy.cli.store",
    "verify": "proxy.cli.store",
    "beliefs": "proxy.cli.store",
    "serve": "proxy.cli.serve",
    "context": "proxy.cli.context",
    "eval": "proxy.cli.evaluate",
    "compact": "proxy.cli.compact",
    "persona": "proxy.cli.persona",
    "rules": "proxy.cli.rules",
    "jobs": "proxy.cli.jobs",
    "mcp": "proxy.cli.mcp",
    "eval-extract": "proxy.cli.eval_extract",
    "db": "proxy.cli.db",
    "tokens": "proxy.cli.tokens",
    "ingest": "proxy.cli.ingest",
    "sources": "proxy.cli.ingest",
}
COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(COMMANDS.values()))


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with `argv` naming a command, only that command's module is imported."""
    parser = argparse.ArgumentParser(
        prog="tenure",
        description="Belief memory for LLM agents: data lives in TENURE_HOME (default ~/.tenure).",
    )
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    first = next((arg for arg in argv or () if not arg.startswith("-")), None)
    wanted = COMMANDS.get(first or "")
    for name in (wanted,) if wanted else COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (1 for errors, 2 for usage)."""
    # LiteLLM fetches its model price list from the internet on import unless told to use the
    # copy it ships with; nothing of ours may reach the network except the upstream. Set before
    # any command can import it (an explicit choice in the environment is kept).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse reports usage errors and --help this way
        return exc.code if isinstance(exc.code, int) else 2
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        settings = Settings.load()
        for warning in unknown_variables(os.environ, settings):
            print(f"warning: {warning}", file=sys.stderr)
        return int(handler(args, settings))
    except (BeliefError, SettingsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader went away (e.g. `tenure export | head`); stop quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # last resort: users never see a traceback
        print(f"error: unexpected {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
