"""Store invariants: pure functions for what `verify()` checks, and an import's checks made a
batch at a time against what the store already holds.

Reading every stored belief to check a file against them costs memory in proportion to the
store; `ImportCheck` asks the store only about the ids, names and chains the file touches, and
keeps per entry only its id, its live names and its link (if any).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import NamedTuple, Protocol

from beliefs.model.chains import components, find_cycles, links_of
from beliefs.model.models import Belief
from beliefs.text.mentions import chosen_names


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


class StoredView(Protocol):
    """What the check asks of the store (imported entries included once they are written)."""

    def stored_ids(self, ids: Sequence[str]) -> set[str]:
        """Those of `ids` the store holds (deleted rows too)."""

    def live_named(self, names: Collection[tuple[str, str]]) -> list[Belief]:
        """The store's live beliefs with one of these (user, canonical name) pairs."""

    def chains_of(self, ids: Collection[str]) -> list[Belief]:
        """Every stored belief on a supersession chain with one of `ids`, those included."""


_FIELD_ORDER = {"id": 0, "superseded_by": 1, "epistemic_status": 2}


class ImportCheck:
    """Feed the entries with `add` in file order (before writing each batch), then `finish`."""

    def __init__(self, store: StoredView) -> None:
        self.store = store
        self.first: dict[str, int] = {}  # id -> its entry
        self.id_issues: list[ImportIssue] = []
        self.issues: list[ImportIssue] = []
        self._pre_stored: set[str] = set()  # ids the store held before the import
        self._owners: dict[tuple[str, str, str], str] = {}  # live names the file has taken
        self._links: list[tuple[int, str, str]] = []  # (entry, id, superseded_by)

    @property
    def clean(self) -> bool:
        return not self.id_issues and not self.issues

    def add(self, batch: Sequence[Belief], start: int) -> None:
        """Check entries `start`, `start + 1`, … (the batch) against the store and the file."""
        stored = self.store.stored_ids([b.id for b in batch])
        for i, b in enumerate(batch, start):
            self._check_id(i, b, stored)
            if b.superseded_by is not None:
                self._links.append((i, b.id, b.superseded_by))
                if b.epistemic_status != "superseded":
                    self.issues.append(
                        ImportIssue(
                            i,
                            b.id,
                            "epistemic_status",
                            f"is {b.epistemic_status!r} but superseded_by is set; use 'superseded'",
                        )
                    )
        self._check_names(batch, start)

    def _check_id(self, i: int, b: Belief, stored: set[str]) -> None:
        earlier = self.first.get(b.id)
        if earlier is not None:
            self.id_issues.append(ImportIssue(i, b.id, "id", f"duplicates entry {earlier}"))
        else:
            self.first[b.id] = i
        # A stored id this import wrote itself is a duplicate in the file, reported above.
        if b.id in stored and (earlier is None or b.id in self._pre_stored):
            self._pre_stored.add(b.id)
            self.id_issues.append(
                ImportIssue(i, b.id, "id", "already in the store; delete it there or rename it")
            )

    def _check_names(self, batch: Sequence[Belief], start: int) -> None:
        live = [(i, b) for i, b in enumerate(batch, start) if b.is_live]
        holders: dict[tuple[str, str, str], str] = {}
        for other in self.store.live_named({(b.user_id, b.canonical_name) for _, b in live}):
            if other.id not in self.first or other.id in self._pre_stored:
                for key in name_key(other):
                    holders.setdefault(key, other.id)
        for i, b in live:
            for key in name_key(b):
                holder = holders.get(key) or self._owners.get(key)
                if holder is not None and holder != b.id:
                    self.issues.append(
                        ImportIssue(
                            i,
                            b.id,
                            "canonical_name",
                            f"{b.canonical_name!r} in {key[2]} is already used by live belief "
                            f"{holder} of user {b.user_id!r}",
                        )
                    )
                    break
                self._owners[key] = b.id

    def finish(self) -> list[ImportIssue]:
        """Every issue, in entry order; the chain checks need the file's entries written."""
        if self.id_issues:
            return self.id_issues
        unknown = {t for _, _, t in self._links if t not in self.first}
        stored = self.store.stored_ids(sorted(unknown)) if unknown else set()
        for i, bid, target in self._links:
            if target not in self.first and target not in stored:
                reason = f"points to {target}, which is neither in the file nor in the store"
                self.issues.append(ImportIssue(i, bid, "superseded_by", reason))
        self.issues.sort(key=lambda issue: (issue.entry or 0, _FIELD_ORDER.get(issue.field, 3)))
        if self.issues or not self._links:
            return self.issues
        return self._chain_issues()

    def _chain_issues(self) -> list[ImportIssue]:
        """New cycles, then anything else `verify_beliefs` finds on the chains the file joins
        that it did not find on them before."""
        touched = {bid for _, bid, _ in self._links} | {t for _, _, t in self._links}
        union = self.store.chains_of(touched)
        issues: list[ImportIssue] = []
        for ring in find_cycles(links_of(union)):
            text = " -> ".join([*ring, ring[0]])
            member = next((m for m in ring if m in self.first), None)
            if member is not None:
                issues.append(ImportIssue(self.first[member], member, "superseded_by", text))
        if issues:
            return [i._replace(reason=f"cycle {i.reason}") for i in issues]
        before = set(verify_beliefs([b for b in union if b.id not in self.first]))
        return [
            ImportIssue(None, None, "chain", problem)
            for problem in verify_beliefs(union)
            if problem not in before
        ]


class _InMemory:
    """A `StoredView` of beliefs held in a list, with the incoming entries written on top."""

    def __init__(self, existing: Iterable[Belief]) -> None:
        self.rows = {b.id: b for b in existing}

    def stored_ids(self, ids: Sequence[str]) -> set[str]:
        return {bid for bid in ids if bid in self.rows}

    def live_named(self, names: Collection[tuple[str, str]]) -> list[Belief]:
        return [
            b for b in self.rows.values() if b.is_live and (b.user_id, b.canonical_name) in names
        ]

    def chains_of(self, ids: Collection[str]) -> list[Belief]:
        return chains_among(self.rows, ids)


def chains_among(rows: dict[str, Belief], ids: Collection[str]) -> list[Belief]:
    """The beliefs of `rows` on a chain with one of `ids` (links followed both ways)."""
    pointing: dict[str, list[str]] = {}
    for b in rows.values():
        if b.superseded_by is not None:
            pointing.setdefault(b.superseded_by, []).append(b.id)
    seen: set[str] = set()
    todo = [bid for bid in ids if bid in rows]
    while todo:
        bid = todo.pop()
        if bid in seen:
            continue
        seen.add(bid)
        target = rows[bid].superseded_by
        if target is not None and target in rows:
            todo.append(target)
        todo.extend(pointing.get(bid, ()))
    return [b for bid, b in rows.items() if bid in seen]


def import_issues(incoming: Sequence[Belief], existing: Sequence[Belief]) -> list[ImportIssue]:
    """Everything that would break the store if `incoming` were added to `existing`."""
    view = _InMemory(existing)
    check = ImportCheck(view)
    check.add(incoming, 0)
    if check.clean:
        view.rows.update({b.id: b for b in incoming})
    return check.finish()
