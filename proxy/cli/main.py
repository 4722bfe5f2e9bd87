"""The `tenure` command: argparse front end over the command modules in `proxy/cli/`."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from beliefs.errors import BeliefError
from proxy.settings import Settings, SettingsError

# Each module exposes `register(subparsers)`; add new command groups here.
COMMAND_MODULES: tuple[str, ...] = (
    "proxy.cli.store",
    "proxy.cli.serve",
    "proxy.cli.context",
    "proxy.cli.evaluate",
    "proxy.cli.compact",
    "proxy.cli.persona",
    "proxy.cli.rules",
    "proxy.cli.jobs",
    "proxy.cli.mcp",
    "proxy.cli.eval_extract",
    "proxy.cli.db",
    "proxy.cli.tokens",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tenure",
        description="Belief memory for LLM agents: data lives in TENURE_HOME (default ~/.tenure).",
    )
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (1 for errors, 2 for usage)."""
    # LiteLLM fetches its model price list from the internet on import unless told to use the
    # copy it ships with; nothing of ours may reach the network except the upstream. Set before
    # any command can import it (an explicit choice in the environment is kept).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse reports usage errors and --help this way
        return exc.code if isinstance(exc.code, int) else 2
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(handler(args, Settings.load()))
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
