"""`tenure jobs list [--status] [--json] | retry ID`: the extraction queue from the terminal."""

from __future__ import annotations

import argparse
import json
import sys
import urllib.parse
from collections.abc import Callable
from typing import Any, TypeVar

from beliefs.model.errors import BeliefError
from beliefs.store.belief_store import BeliefStore
from extractor.jobs import JOB_STATUSES, Job, JobQueue
from extractor.journal import journal_of
from proxy.cli import count
from proxy.cli.api_client import ApiClient
from proxy.cli.backend import with_backend
from proxy.cli.text import when
from proxy.settings import Settings

T = TypeVar("T")


def register(subparsers: Any) -> None:
    group = subparsers.add_parser("jobs", help="list and retry extraction jobs")
    sub = group.add_subparsers(title="job commands", metavar="COMMAND", required=True)

    cmd = sub.add_parser("list", help="list extraction jobs, newest first")
    cmd.add_argument("--status", choices=JOB_STATUSES, help="only jobs with this status")
    cmd.add_argument(
        "--limit", type=count(1, 1000), default=50, help="at most this many (default 50)"
    )
    cmd.add_argument("--json", action="store_true", help="print JSON instead of text")
    cmd.set_defaults(handler=_list)

    cmd = sub.add_parser("retry", help="run a failed job again")
    cmd.add_argument("id", help="the job id (see `tenure jobs list --status failed`)")
    cmd.add_argument("--json", action="store_true", help="print the job as JSON")
    cmd.set_defaults(handler=_retry)


def _with_queue(
    settings: Settings, local: Callable[[JobQueue], T], remote: Callable[[ApiClient], T]
) -> T:
    """Use the database, or the API of this home's running server while it holds the lock.

    On the database, what a server that died left in the job journal is written first (as the
    next `tenure serve` would), so its last turns are listed too."""

    def on_store(store: BeliefStore) -> T:
        queue = JobQueue(store)
        journal = journal_of(settings.home, enabled=settings.journal)
        if journal is not None:
            journal.recover(queue.replay)
        return local(queue)

    return with_backend(settings, on_store, remote)


def _list(args: argparse.Namespace, settings: Settings) -> int:
    if args.limit < 1:
        print(f"error: --limit {args.limit}: use a whole number >= 1", file=sys.stderr)
        return 2
    jobs = _with_queue(
        settings,
        lambda queue: queue.list(args.status, args.limit),
        lambda api: [
            Job.model_validate(j)
            for j in api.get("/api/jobs", status=args.status, limit=min(args.limit, 1000))
        ],
    )
    if args.json:
        _json([j.model_dump(mode="json") for j in jobs])
        return 0
    if not jobs:
        print("no jobs" + (f" with status {args.status}" if args.status else ""))
        return 0
    for job in jobs:
        line = (
            f"{job.id}  {job.status:<7}  attempts {job.attempts}  {when(job.created_at)}  "
            f"{job.turn.user_id}  wrote {len(job.written_ids)}"
        )
        if job.skipped:
            line += f", skipped {len(job.skipped)}"
        if job.last_error and job.status != "done":
            line += f"  error: {_one_line(job.last_error)}"
        if job.suspect:
            line += f"  suspect: {_one_line(job.suspect)}"
        print(line)
    print(f"{len(jobs)} job{'s' if len(jobs) != 1 else ''}")
    return 0


def _retry(args: argparse.Namespace, settings: Settings) -> int:
    def remote(api: ApiClient) -> tuple[Job, str]:
        job = Job.model_validate(
            api.post(f"/api/jobs/{urllib.parse.quote(args.id, safe='')}/retry")
        )
        try:
            health = api.get("/healthz")
        except BeliefError:  # 503: the store is failing; /healthz says why
            return job, "but the running server reports trouble: see its /healthz or /status page"
        return job, _pickup(health.get("extractor"))

    job, pickup = _with_queue(
        settings,
        lambda queue: (queue.retry(args.id), "the next `tenure serve` picks it up"),
        remote,
    )
    if args.json:
        _json(job.model_dump(mode="json"))
    else:
        print(f"job {job.id} is pending again; {pickup}")
    return 0


def _pickup(extractor: dict[str, Any] | None) -> str:
    """When the running server will take a retried job, from its /healthz extractor state."""
    if not extractor or not extractor.get("workers"):
        return "but the running server has no extraction workers (TENURE_EXTRACT_WORKERS)"
    if extractor.get("config_fault"):
        return f"but it will fail again until extraction is configured: {extractor['config_fault']}"
    if extractor.get("state") == "open":
        wait = round(float(extractor.get("retry_in_s") or 0))
        return f"the model keeps failing (breaker open): the server tries again in {wait} s"
    return "the running server picks it up within a second"


def _json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def _one_line(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
