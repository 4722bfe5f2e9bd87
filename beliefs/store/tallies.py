"""Counts and id look-ups over the beliefs table that the API's listings and facets need, and
the invariant report the API and the CLI print."""

from __future__ import annotations

from dataclasses import dataclass

from beliefs.model.models import Belief
from beliefs.store.belief_store import BeliefStore
from beliefs.store.invariants import stale_directives

_LIVE = "superseded_by IS NULL AND epistemic_status <> 'superseded' AND deleted_at IS NULL"

_SCOPES_SQL = f"""
SELECT s, count(*), count(*) FILTER (WHERE pinned), count(*) FILTER (WHERE review_state = 'pending')
FROM (SELECT unnest(scope) AS s, pinned, review_state FROM beliefs
      WHERE {_LIVE} AND (? IS NULL OR user_id = ?))
GROUP BY s ORDER BY s
"""
_USERS_SQL = f"SELECT user_id, count(*) FROM beliefs WHERE {_LIVE} GROUP BY user_id ORDER BY 1"


@dataclass(frozen=True)
class ScopeCount:
    scope: str
    count: int
    pinned: int
    pending: int


def scope_counts(store: BeliefStore, user_id: str | None = None) -> list[ScopeCount]:
    """Live beliefs per scope (every user's, or one user's): total, pinned, pending review."""
    rows = store.execute(_SCOPES_SQL, [user_id, user_id]).fetchall()
    return [ScopeCount(s, n, p, q) for s, n, p, q in rows]


def user_counts(store: BeliefStore) -> list[tuple[str, int]]:
    """Live beliefs per user, by user id."""
    return [(u, n) for u, n in store.execute(_USERS_SQL).fetchall()]


def user_ids(store: BeliefStore, *, include_deleted: bool = False) -> list[str]:
    """Every user with a belief (superseded ones count; deleted ones when asked), sorted."""
    where = "" if include_deleted else " WHERE deleted_at IS NULL"
    rows = store.execute(f"SELECT DISTINCT user_id FROM beliefs{where} ORDER BY 1").fetchall()
    return [row[0] for row in rows]


def beliefs_by_ids(store: BeliefStore, ids: list[str]) -> list[Belief]:
    """The beliefs with these ids that exist, oldest first."""
    rows = store.execute(
        "SELECT id FROM beliefs WHERE list_contains(?, id) ORDER BY created_at, id", [ids]
    ).fetchall()
    return [store.get(row[0]) for row in rows]


def verify_report(store: BeliefStore) -> dict[str, object]:
    """The store's invariant problems, and live directives that name an option their belief
    rules out, and how many beliefs it holds, in any state."""
    beliefs = store.list(include_superseded=True, include_deleted=True)
    problems = [*store.verify(), *stale_directives(beliefs)]
    total = len(beliefs)
    return {"ok": not problems, "beliefs": total, "problems": problems}
