"""The `compaction_runs` table: when each run happened, what it examined and changed, errors."""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from beliefs.model.models import as_utc, utcnow
from beliefs.store.belief_store import BeliefStore

RunStatus = Literal["running", "done", "failed", "interrupted"]
Trigger = Literal["scheduled", "manual", "api"]

# What a run examined and changed, in the order a report shows them.
RUN_COUNTS = (
    "examined",
    "clusters",
    "merged",
    "superseded",
    "flagged",
    "aliased",
    "promoted",
    "expired",
    "purged",
)
_COUNTS = (*RUN_COUNTS, "skipped_scopes")
_COLUMNS = (
    "id, status, trigger, user_id, scope, started_at, finished_at, duration_ms, "
    + ", ".join(_COUNTS)
    + ", errors, changes"
)


def new_run_id() -> str:
    return f"r-{secrets.token_hex(8)}"


class RunReport(BaseModel):
    """One run: the counts, every change (planned, for a dry run) and every error."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=new_run_id)
    status: RunStatus = "running"
    trigger: Trigger = "manual"
    dry_run: bool = False
    user_id: str | None = None
    scope: str | None = None
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
    duration_ms: float | None = None
    examined: int = 0
    clusters: int = 0
    merged: int = 0
    superseded: int = 0
    flagged: int = 0
    aliased: int = 0
    promoted: int = 0
    expired: int = 0
    purged: int = 0
    skipped_scopes: int = 0
    errors: list[str] = Field(default_factory=list)
    changes: list[dict[str, Any]] = Field(default_factory=list)

    def count(self, change: dict[str, Any]) -> None:
        """Add one change to the list and to its counter."""
        self.changes.append(change)
        action = change["action"]
        if action == "merge":
            self.merged += 1
            self.superseded += len(change["source_ids"])
        elif action == "conflict":
            self.flagged += 1
        elif action == "alias":
            self.aliased += len(change["aliases"])
        elif action in ("promote", "expire", "purge"):
            field = {"promote": "promoted", "expire": "expired", "purge": "purged"}[action]
            setattr(self, field, getattr(self, field) + 1)


def start_run(store: BeliefStore, report: RunReport) -> None:
    """Record the run as running; rows left running by a killed process become interrupted."""
    with store.transaction():
        store.execute("UPDATE compaction_runs SET status = 'interrupted' WHERE status = 'running'")
        store.execute(
            "INSERT INTO compaction_runs (id, status, trigger, user_id, scope, started_at) "
            "VALUES (?, 'running', ?, ?, ?, ?)",
            [report.id, report.trigger, report.user_id, report.scope, report.started_at],
        )


def finish_run(store: BeliefStore, report: RunReport) -> None:
    counts = [getattr(report, name) for name in _COUNTS]
    store.execute(
        "UPDATE compaction_runs SET status = ?, finished_at = ?, duration_ms = ?, "
        + ", ".join(f"{name} = ?" for name in _COUNTS)
        + ", errors = ?, changes = ? WHERE id = ?",
        [
            report.status,
            report.finished_at,
            report.duration_ms,
            *counts,
            json.dumps(report.errors),
            json.dumps(report.changes, default=str),
            report.id,
        ],
    )


def list_runs(
    store: BeliefStore, *, user_id: str | None = None, limit: int = 20
) -> list[RunReport]:
    """Newest first."""
    sql = f"SELECT {_COLUMNS} FROM compaction_runs"
    params: list[Any] = []
    if user_id is not None:
        sql += " WHERE user_id = ? OR user_id IS NULL"
        params.append(user_id)
    sql += f" ORDER BY started_at DESC, id DESC LIMIT {max(0, int(limit))}"
    return [_report(row) for row in store.execute(sql, params).fetchall()]


def _report(row: Sequence[Any]) -> RunReport:
    fixed = dict(
        zip(
            ("id", "status", "trigger", "user_id", "scope", "started_at", "finished_at"),
            row[:7],
            strict=True,
        )
    )
    counts = dict(zip(_COUNTS, row[8 : 8 + len(_COUNTS)], strict=True))
    return RunReport(
        **fixed,
        **counts,
        duration_ms=row[7],
        errors=json.loads(row[-2]) if row[-2] else [],
        changes=json.loads(row[-1]) if row[-1] else [],
    ).model_copy(update={"started_at": as_utc(row[5]), "finished_at": as_utc(row[6])})
