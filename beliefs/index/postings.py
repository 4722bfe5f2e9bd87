"""Postings: the members a key of the index names, in the smallest form that serves.

A lone member is held as itself, a few in a tuple, more in a set. Most names, stems and fuzzy
keys belong to one belief or token or a few, and a set costs over 200 bytes, which a store of a
million beliefs holds several times over. A group of a large alias posting is a list
(`join`): 8 bytes a member instead of a set's 27 to 53, for members known to be new.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable
from typing import TypeVar

Members = str | tuple[str, ...] | set[str] | list[str]
SMALL_POSTING = 8  # members held in a tuple up to this many
K = TypeVar("K", bound=Hashable)


def with_member(value: Members, member: str) -> Members:
    """The posting `value` with `member` added (a set is added to in place)."""
    if isinstance(value, str):
        return value if value == member else (value, member)
    if isinstance(value, tuple):
        if member in value:
            return value
        return (*value, member) if len(value) < SMALL_POSTING else {*value, member}
    if isinstance(value, list):
        if member not in value:
            value.append(member)
        return value
    value.add(member)
    return value


def join(mapping: dict[K, Members], key: K, member: str) -> None:
    """Add `member`, known not to be there, to the posting at `key`: past a tuple's size it
    goes into a list (appending to which costs no look for it)."""
    value = mapping.get(key)
    if value is None:
        mapping[key] = member
    elif isinstance(value, str):
        mapping[key] = (value, member)
    elif isinstance(value, tuple):
        mapping[key] = (*value, member) if len(value) < SMALL_POSTING else [*value, member]
    elif isinstance(value, list):
        value.append(member)
    else:
        value.add(member)


def members(value: Members | None) -> Collection[str]:
    """The members of a posting (none when absent)."""
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else value


def put(mapping: dict[K, Members], key: K, member: str) -> None:
    """Add `member` to the posting at `key`."""
    value = mapping.get(key)
    mapping[key] = member if value is None else with_member(value, member)


def take(mapping: dict[K, Members], key: K, member: str) -> None:
    """Remove `member` from the posting at `key`; an emptied posting goes."""
    value = mapping.get(key)
    if value is None:
        return
    if isinstance(value, str):
        if value == member:
            del mapping[key]
        return
    if isinstance(value, tuple):
        left = tuple(m for m in value if m != member)
    else:
        if isinstance(value, list):
            if member in value:
                value.remove(member)
        else:
            value.discard(member)
        if len(value) > SMALL_POSTING:
            return
        left = tuple(value)
    if len(left) > 1:
        mapping[key] = left
    elif left:
        mapping[key] = left[0]
    else:
        del mapping[key]
