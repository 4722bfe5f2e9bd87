"""`tenure compact`: merge duplicates, flag contradictions, enrich aliases, expire, purge."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from typing import Any

from beliefs.model.models import SCOPE_PATTERN
from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from compaction import RunReport
from proxy.cli.api_client import ApiClient
from proxy.cli.backend import with_backend
from proxy.runtime import compaction_parts
from proxy.settings import Settings, SettingsError

API_TIMEOUT = 600.0


def register(subparsers: Any) -> None:
    cmd = subparsers.add_parser(
        "compact",
        help="run compaction now (merge duplicates, flag contradictions, add aliases, expire)",
        description="Run one compaction pass. With --dry-run, print what it would change.",
    )
    cmd.add_argument("--user", help="only this user (default: every user)")
    cmd.add_argument("--scope", help="only beliefs in this scope, e.g. domain:code")
    cmd.add_argument("--dry-run", action="store_true", help="print the plan; change nothing")
    cmd.add_argument("--force", action="store_true", help="also examine scopes that are quiet")
    cmd.add_argument("--json", action="store_true", help="print the run report as JSON")
    cmd.set_defaults(handler=_compact)


def _compact(args: argparse.Namespace, settings: Settings) -> int:
    scope = args.scope.strip().lower() if args.scope else None
    if scope is not None and not SCOPE_PATTERN.match(scope):
        raise SettingsError(
            f"--scope {args.scope!r} is not one of user:universal, domain:<slug>, project:<slug>"
        )
    options: dict[str, Any] = {
        "user_id": args.user,
        "scope": scope,
        "dry_run": args.dry_run,
        "force": args.force,
    }
    body = {"user": args.user, "scope": scope, "dry_run": args.dry_run, "force": args.force}

    def local(store: BeliefStore) -> RunReport:
        # Only the report goes to stdout: whatever the model library prints on a failed call
        # (LiteLLM's help banner) must not break `--json`.
        with contextlib.redirect_stdout(sys.stderr):
            return asyncio.run(_run(settings, store, options))

    def remote(client: ApiClient) -> RunReport:
        return RunReport.model_validate(client.send("POST", "/api/compaction/run", body))

    report = with_backend(settings, local, remote, timeout=API_TIMEOUT)
    if args.json:
        json.dump(report.model_dump(mode="json"), sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print("\n".join(report_lines(report)))
    return 0 if not report.errors else 1


async def _run(settings: Settings, store: BeliefStore, options: dict[str, Any]) -> RunReport:
    thread = StoreThread(store)
    parts = compaction_parts(settings, thread)
    try:
        return await parts.compactor.run(**options)
    finally:
        if parts.own_llm is not None:
            await parts.own_llm.aclose()
        thread.close()


def report_lines(report: RunReport) -> list[str]:
    verb = "would change" if report.dry_run else "changed"
    lines = [
        f"{'dry run' if report.dry_run else 'run'} {report.id}: examined {report.examined} "
        f"beliefs in {report.clusters} clusters ({report.skipped_scopes} quiet scopes skipped) "
        f"in {report.duration_ms or 0:.0f} ms",
        f"{verb}: {report.merged} merges ({report.superseded} superseded), "
        f"{report.flagged} conflicts, {report.aliased} aliases, {report.promoted} promoted, "
        f"{report.expired} expired, {report.purged} purged",
    ]
    for change in report.changes:
        lines.append("  " + _change_line(change))
    for error in report.errors:
        lines.append(f"  error: {error}")
    return lines


def _change_line(change: dict[str, Any]) -> str:
    action = change["action"]
    if action == "merge":
        sources = ", ".join(change["source_ids"])
        return (
            f"merge {sources} -> {change['survivor_id']} {change['canonical_name']} "
            f"({change['origin']}: {change['reason']})"
        )
    if action == "conflict":
        return f"conflict {change['existing_id']} <> {change['other_id']}: {change['reason']}"
    if action == "alias":
        aliases = ", ".join(repr(a) for a in change["aliases"])
        return f"alias {change['belief_id']} += {aliases} ({change['origin']})"
    return f"{action} {change['belief_id']}: {change['reason']}"
