"""`FuzzyKeys`: alias tokens by the hash of each of their deletion variants, packed.

A user's one-word alias tokens are found one edit away through their deletion variants: about
eight per token, over three million keys for a million beliefs. In a dict each key is an int
object and an entry, about 90 bytes; here the keys read at start-up sit in a sorted array of
64-bit ints beside a list of their postings, about 16 bytes a key, found by bisection.

Keys are staged while a store's rows are read (`stage`, then `pack` once they all are): the
ints are made and dropped one at a time, so their memory is reused rather than left scattered
among the records read meanwhile. Later changes go to a small dict whose entry for a key
stands for that key (an empty tuple: emptied), so writes never shift the packed arrays.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Sequence

from beliefs.postings import Members, put, take, with_member


class FuzzyKeys:
    """A map of int keys to postings of alias tokens (`Members`)."""

    __slots__ = ("_changed", "_keys", "_staged", "_values")

    def __init__(self) -> None:
        self._keys: array[int] = array("q")  # sorted, each once
        self._values: list[Members] = []  # the posting of each of `_keys`
        self._changed: dict[int, Members] = {}  # written since the pack; stands for `_keys`
        self._staged: tuple[array[int], list[str]] | None = None

    def get(self, key: int) -> Members | None:
        """The posting at `key` (None when there is none)."""
        found = self._changed.get(key)
        if found is not None:
            return found or None
        return self._packed(key)

    def put(self, key: int, token: str) -> None:
        if self._staged is not None:
            keys, tokens = self._staged
            keys.append(key)
            tokens.append(token)
            return
        self._own(key)
        put(self._changed, key, token)

    def take(self, key: int, token: str) -> None:
        packed = self._own(key)
        take(self._changed, key, token)
        if packed and key not in self._changed:
            self._changed[key] = ()  # emptied: the packed posting no longer counts

    def stage(self) -> None:
        """Collect the keys put from now until `pack` (nothing is read meanwhile)."""
        if self._staged is None:
            self._staged = (array("q"), [])

    def pack(self) -> None:
        """Sort every key into the packed arrays: the staged ones, and any changed since."""
        staged, self._staged = self._staged, None
        if staged is None and not self._changed:
            return
        if staged is not None and not self._keys and not self._changed:
            keys: array[int] = staged[0]  # the start-up case: no dict of every key on the way
            tokens: Sequence[Members] = staged[1]
        else:
            merged = dict(self.items())
            for key, token in zip(*(staged or ((), ())), strict=True):
                put(merged, key, token)
            keys, tokens = array("q", merged), list(merged.values())
        packed_keys: array[int] = array("q")
        values: list[Members] = []
        for i in sorted(range(len(keys)), key=keys.__getitem__):
            key, value = keys[i], tokens[i]
            if packed_keys and packed_keys[-1] == key:
                for token in (value,) if isinstance(value, str) else value:
                    values[-1] = with_member(values[-1], token)
            else:
                packed_keys.append(key)
                values.append(value)
        self._keys, self._values, self._changed = packed_keys, values, {}

    def items(self) -> Iterator[tuple[int, Members]]:
        """Every key with its posting (the changed ones as changed, emptied ones left out)."""
        for key, value in zip(self._keys, self._values, strict=True):
            if key not in self._changed:
                yield key, value
        for key, value in self._changed.items():
            if value:
                yield key, value

    def __len__(self) -> int:
        return sum(1 for _ in self.items())

    def _packed(self, key: int) -> Members | None:
        keys = self._keys
        at = bisect_left(keys, key)
        if at < len(keys) and keys[at] == key:
            return self._values[at]
        return None

    def _own(self, key: int) -> bool:
        """Bring a packed posting into the changed dict before it changes; whether `key` has
        one."""
        packed = self._packed(key)
        if key not in self._changed and packed is not None:
            self._changed[key] = set(packed) if isinstance(packed, set) else packed
        return packed is not None
