"""Store invariants as pure functions: what `verify()` and imports check."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from beliefs.chains import components, find_cycles, links_of
from beliefs.mentions import chosen_names
from beliefs.models import Belief


def name_key(belief: Belief) -> list[tuple[str, str, str]]:
    """One key per scope: a canonical name is unique among a user's live beliefs per scope."""
    return [(belief.user_id, belief.canonical_name, scope) for scope in belief.scope]


def clash_with(candidate: Belief, others: Iterable[Belief]) -> Belief | None:
    """A live belief other than `candidate` that shares its user, canonical name and a scope."""
    if not candidate.is_live:
        return None
    keys = set(name_key(candidate))
    for other in others:
        if other.id != candidate.id and other.is_live and keys.intersection(name_key(other)):
            return other
    return None


def name_clashes(beliefs: Iterable[Belief]) -> list[tuple[str, str, str, list[str]]]:
    """(user, name, scope, ids) for every scope where two live beliefs share a name."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for belief in beliefs:
        if belief.is_live:
            for key in name_key(belief):
                groups.setdefault(key, []).append(belief.id)
    return [(*key, sorted(ids)) for key, ids in groups.items() if len(ids) > 1]


def verify_beliefs(beliefs: Sequence[Belief]) -> list[str]:
    """Every broken invariant, one sentence each; empty means clean."""
    problems: list[str] = []
    by_id = {b.id: b for b in beliefs}
    links = links_of(beliefs)
    for b in beliefs:
        if b.superseded_by is None:
            continue
        if b.superseded_by not in by_id:
            problems.append(f"{b.id}: superseded_by {b.superseded_by} points to no belief")
        if b.epistemic_status != "superseded":
            problems.append(
                f"{b.id}: has superseded_by {b.superseded_by} but epistemic_status is "
                f"{b.epistemic_status!r}, not 'superseded'"
            )
    for ring in find_cycles(links):
        problems.append("supersession cycle: " + " -> ".join([*ring, ring[0]]))
    for group in components(beliefs):
        heads = [b.id for b in group if b.epistemic_status != "superseded" and b.deleted_at is None]
        if len(heads) > 1:
            problems.append(f"chain has {len(heads)} live heads: {', '.join(sorted(heads))}")
    for user, name, scope, ids in name_clashes(beliefs):
        problems.append(
            f"user {user!r} has {len(ids)} live beliefs named {name!r} in {scope}: "
            + ", ".join(ids)
        )
    return problems


def stale_directives(beliefs: Iterable[Belief]) -> list[str]:
    """Live beliefs whose directive says to use an option the belief itself rules out (a
    correction that kept the old why_it_matters), one sentence each."""
    problems = []
    for b in beliefs:
        named = chosen_names(b.why_it_matters, b.rejected_alternatives) if b.is_live else []
        if named:
            problems.append(
                f"{b.id}: its directive (why_it_matters) names "
                f"{', '.join(repr(n) for n in named)}, which it lists as ruled out; edit the "
                "directive to state the current choice"
            )
    return problems


class ImportIssue(NamedTuple):
    """One reason an import is refused, pointing at the entry and field."""

    entry: int | None
    belief_id: str | None
    field: str
    reason: str

    def __str__(self) -> str:
        where = f"entry {self.entry}" if self.entry is not None else "file"
        ident = f" (id {self.belief_id})" if self.belief_id else ""
        return f"{where}{ident}: {self.field}: {self.reason}"


def import_issues(incoming: Sequence[Belief], existing: Sequence[Belief]) -> list[ImportIssue]:
    """Everything that would break the store if `incoming` were added to `existing`."""
    issues: list[ImportIssue] = []
    stored = {b.id for b in existing}
    first: dict[str, int] = {}
    for i, b in enumerate(incoming):
        if b.id in first:
            issues.append(ImportIssue(i, b.id, "id", f"duplicates entry {first[b.id]}"))
        else:
            first[b.id] = i
        if b.id in stored:
            issues.append(
                ImportIssue(i, b.id, "id", "already in the store; delete it there or rename it")
            )
    if issues:
        return issues
    known = stored | set(first)
    for i, b in enumerate(incoming):
        if b.superseded_by is not None and b.superseded_by not in known:
            issues.append(
                ImportIssue(
                    i,
                    b.id,
                    "superseded_by",
                    f"points to {b.superseded_by}, which is neither in the file nor in the store",
                )
            )
        if b.superseded_by is not None and b.epistemic_status != "superseded":
            issues.append(
                ImportIssue(
                    i,
                    b.id,
                    "epistemic_status",
                    f"is {b.epistemic_status!r} but superseded_by is set; use 'superseded'",
                )
            )
    union = [*existing, *incoming]
    for ring in find_cycles(links_of(union)):
        text = " -> ".join([*ring, ring[0]])
        for member in ring:
            if member in first:
                issues.append(ImportIssue(first[member], member, "superseded_by", f"cycle {text}"))
                break
    issues.extend(_new_clashes(incoming, existing))
    if issues:
        return issues
    before = set(verify_beliefs(existing))
    for problem in verify_beliefs(union):
        if problem not in before:
            issues.append(ImportIssue(None, None, "chain", problem))
    return issues


def _new_clashes(incoming: Sequence[Belief], existing: Sequence[Belief]) -> list[ImportIssue]:
    issues: list[ImportIssue] = []
    owners: dict[tuple[str, str, str], str] = {}
    for b in existing:
        if b.is_live:
            for key in name_key(b):
                owners.setdefault(key, b.id)
    for i, b in enumerate(incoming):
        if not b.is_live:
            continue
        for key in name_key(b):
            holder = owners.get(key)
            if holder is not None and holder != b.id:
                issues.append(
                    ImportIssue(
                        i,
                        b.id,
                        "canonical_name",
                        f"{b.canonical_name!r} in {key[2]} is already used by live belief "
                        f"{holder} of user {b.user_id!r}",
                    )
                )
                break
            owners[key] = b.id
    return issues
