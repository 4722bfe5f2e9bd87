"""Supersession chains as pure functions: links, cycles, ordering and the supersede decision.

A chain is the set of beliefs joined by `superseded_by` links. Several beliefs may point to the
same replacement (a merge), so a chain is a tree converging on one head.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from beliefs.model.errors import ChainError, InvalidBelief
from beliefs.model.models import Belief

Links = Mapping[str, str | None]


def links_of(beliefs: Iterable[Belief]) -> dict[str, str | None]:
    return {b.id: b.superseded_by for b in beliefs}


def follow(links: Links, start: str) -> tuple[list[str], bool]:
    """The path from `start` along `superseded_by` links; True if it runs into a cycle."""
    path = [start]
    seen = {start}
    current = start
    while True:
        nxt = links.get(current)
        if nxt is None or nxt not in links:
            return path, False
        if nxt in seen:
            return path, True
        path.append(nxt)
        seen.add(nxt)
        current = nxt


def find_cycles(links: Links) -> list[list[str]]:
    """Each distinct cycle once, as the ids on it starting from the smallest."""
    cycles: dict[tuple[str, ...], list[str]] = {}
    for start in links:
        path, looped = follow(links, start)
        if not looped:
            continue
        entry = links[path[-1]]
        assert entry is not None
        ring = path[path.index(entry) :]
        pivot = ring.index(min(ring))
        ring = ring[pivot:] + ring[:pivot]
        cycles.setdefault(tuple(ring), ring)
    return list(cycles.values())


def would_cycle(links: Links, old_id: str, new_id: str) -> bool:
    """Whether adding `old_id -> new_id` closes a loop."""
    if old_id == new_id:
        return True
    path, looped = follow(links, new_id)
    return looped or old_id in path


def components(beliefs: Sequence[Belief]) -> list[list[Belief]]:
    """Chains (connected by links, ignoring dangling ones), each in input order."""
    parent = {b.id: b.id for b in beliefs}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for b in beliefs:
        if b.superseded_by is not None and b.superseded_by in parent:
            parent[root(b.id)] = root(b.superseded_by)
    groups: dict[str, list[Belief]] = {}
    for b in beliefs:
        groups.setdefault(root(b.id), []).append(b)
    return list(groups.values())


def chain_of(beliefs: Sequence[Belief], belief_id: str) -> list[Belief]:
    """The whole chain containing `belief_id`, oldest -> newest."""
    for group in components(beliefs):
        if any(b.id == belief_id for b in group):
            return order_chain(group)
    return []


def order_chain(members: Sequence[Belief]) -> list[Belief]:
    """Oldest -> newest: farthest from the head first, then by creation time."""
    links = links_of(members)

    def distance(b: Belief) -> int:
        path, looped = follow(links, b.id)
        return len(members) + 1 if looped else len(path) - 1

    return sorted(members, key=lambda b: (-distance(b), b.created_at, b.id))


def check_supersede(old: Belief, replacement: Belief, links: Links) -> None:
    """Raise unless `old` may be replaced by the new row `replacement`.

    Raises:
        ChainError: `old` is already superseded or deleted, or the link would close a cycle.
        InvalidBelief: the replacement is not a fresh live belief of the same user.
    """
    if old.superseded_by is not None or old.epistemic_status == "superseded":
        by = f" by {old.superseded_by}" if old.superseded_by else ""
        raise ChainError(
            f"{old.id} is already superseded{by}; supersede the head of its chain instead "
            f"(`tenure beliefs chain {old.id}` shows it)"
        )
    if old.deleted_at is not None:
        raise ChainError(f"{old.id} is deleted; restore it before superseding it")
    if would_cycle(links, old.id, replacement.id):
        raise ChainError(
            f"superseding {old.id} with {replacement.id} would create a cycle in the chain"
        )
    if replacement.id in links:
        raise InvalidBelief(
            f"replacement id {replacement.id} already exists; give the replacement a new id"
        )
    if replacement.user_id != old.user_id:
        raise InvalidBelief(
            f"replacement belongs to user {replacement.user_id!r} but {old.id} belongs to "
            f"{old.user_id!r}; a belief can only be superseded within one user"
        )
    if not replacement.is_live:
        raise InvalidBelief(
            f"replacement {replacement.id} must be live (no superseded_by, not deleted, "
            "epistemic_status other than 'superseded')"
        )
