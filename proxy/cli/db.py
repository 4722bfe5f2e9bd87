"""`tenure db copy SRC DST`: move a home's whole store between DuckDB and PostgreSQL."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from beliefs.model.errors import BeliefError
from beliefs.opening import open_store
from beliefs.store.backend import is_postgres_url, redacted
from beliefs.store.transfer import copy_store, differences
from compaction.migrations import MIGRATIONS as COMPACTION_TABLES
from extractor.migrations import MIGRATIONS as JOB_TABLES
from proxy.gateway.tables import MIGRATIONS as GATEWAY_TABLES
from proxy.security.tables import MIGRATIONS as SECURITY_TABLES
from proxy.settings import Settings

# Every package's tables, so both stores hold the same set before rows move.
ALL_TABLES = (JOB_TABLES, COMPACTION_TABLES, GATEWAY_TABLES, SECURITY_TABLES)


def register(subparsers: Any) -> None:
    group = subparsers.add_parser("db", help="move a store between DuckDB and PostgreSQL")
    sub = group.add_subparsers(title="db commands", metavar="COMMAND", required=True)
    cmd = sub.add_parser(
        "copy",
        help="copy a whole store (beliefs with history, rules, jobs, injections, conflicts, "
        "personas) into an empty one, then compare them and verify the copy",
    )
    cmd.add_argument(
        "source",
        help="a postgresql:// URL, a .duckdb file, or a home directory (its tenure.duckdb)",
    )
    cmd.add_argument("dest", help="the same kinds; it must be empty (nothing is overwritten)")
    cmd.set_defaults(handler=_copy)


def location(text: str) -> Path | str:
    """A URL as given; a directory means the home's `tenure.duckdb`."""
    if is_postgres_url(text):
        return text
    path = Path(text).expanduser()
    return path / "tenure.duckdb" if path.is_dir() or not path.suffix else path


def _name(where: Path | str) -> str:
    return redacted(where) if isinstance(where, str) else str(where)


def _copy(args: argparse.Namespace, settings: Settings) -> int:
    source, dest = location(args.source), location(args.dest)
    if _name(source) == _name(dest):
        raise BeliefError(f"source and destination are the same store ({_name(source)})")
    if isinstance(source, Path) and not source.exists():
        raise BeliefError(f"no store at {source}; give a .duckdb file, a home, or a URL")
    with open_store(source) as src, open_store(dest) as dst:
        for tables in ALL_TABLES:
            src.ensure_schema(tables)
            dst.ensure_schema(tables)
        counts = copy_store(src, dst)
        problems = differences(src, dst)
    if problems:
        for problem in problems:
            print(f"differs: {problem}", file=sys.stderr)
        return 1
    with open_store(dest) as copied:
        issues = copied.verify()
    for issue in issues:
        print(f"verify: {issue}", file=sys.stderr)
    total = sum(counts.values())
    print(
        f"copied {total} row{'' if total == 1 else 's'} in {len(counts)} tables from "
        f"{_name(source)} to {_name(dest)}: "
        + ", ".join(f"{t} {n}" for t, n in counts.items() if n)
    )
    print("verify: clean" if not issues else f"verify: {len(issues)} problem(s)")
    return 1 if issues else 0
