"""`FuzzyKeys`: alias tokens by the hash of each of their deletion variants, packed.

A user's one-word alias tokens are found one edit away through their deletion variants: about
eight per token, over three million keys for a million beliefs. In a dict each key is an int
object and an entry, about 90 bytes; here the keys read at start-up sit in a sorted array of
64-bit ints beside a list of their tokens, 16 bytes a key, found by bisection (a key several
tokens share is a run of equal keys).

Keys are staged while a store's rows are read (`stage`, then `pack` once they all are), in 256
parts by their top byte: the ints are made and dropped one at a time, so their memory is reused
rather than left scattered among the records read meanwhile, and each part sorts within the
processor's caches. Later changes go to a small dict whose entry for a key stands for that key
(an empty tuple: emptied), so writes never shift the packed arrays. A user with fewer than
PACK_MIN keys (about 12k beliefs) keeps them all in the dict: a lookup in the packed arrays
costs about 3 µs against a dict's 0.15 µs here, worth it only where the memory is.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator

from beliefs.index.postings import SMALL_POSTING, Members, put, take

PART_SHIFT = 56  # a staged key's part: its top byte
# Fewer keys than this stay in the dict: a bisection costs about 20 times a dict probe, and a
# small user's keys cost little memory.
PACK_MIN = 100_000
DIRECTORY_BITS = 16  # the packed keys' start offsets by their top bits: a bisection's window


class FuzzyKeys:
    """A map of int keys to postings of alias tokens (`Members`)."""

    __slots__ = ("_changed", "_directory", "_keys", "_pack_min", "_staged", "_tokens")

    def __init__(self, pack_min: int | None = None) -> None:
        self._pack_min = pack_min  # fewer staged keys than this go to the dict (PACK_MIN)
        self._keys: array[int] = array("q")  # sorted; a key of several tokens repeats
        self._tokens: list[str] = []  # the token of each of `_keys`
        self._changed: dict[int, Members] = {}  # written since the pack; stands for `_keys`
        self._staged: dict[int, tuple[array[int], list[str]]] | None = None
        self._directory: array[int] = array("q")  # see `pack`

    def get(self, key: int) -> Members | None:
        """The posting at `key` (None when there is none)."""
        found = self._changed.get(key)
        if found is not None:
            return found or None
        return self._packed(key)

    def put(self, key: int, token: str) -> None:
        staged = self._staged
        if staged is not None:
            part = staged.get(key >> PART_SHIFT)
            if part is None:
                part = staged[key >> PART_SHIFT] = (array("q"), [])
            part[0].append(key)
            part[1].append(token)
            return
        self._own(key)
        put(self._changed, key, token)

    def take(self, key: int, token: str) -> None:
        packed = self._own(key)
        take(self._changed, key, token)
        if packed and key not in self._changed:
            self._changed[key] = ()  # emptied: the packed posting no longer counts

    def stage(self) -> None:
        """Collect the keys put from now until `pack` (nothing is read meanwhile). A key
        is put once per token (a token's variants are put when it first comes)."""
        if self._staged is None:
            self._staged = {}

    def pack(self) -> None:
        """Sort every key into the packed arrays: the staged ones, and any changed since."""
        staged, self._staged = self._staged, None
        if staged is None and not self._changed:
            return
        if self._keys or self._changed:  # written since a pack: every key staged anew
            held = list(self.items())
            staged = staged or {}
            self._keys, self._tokens, self._changed = array("q"), [], {}
            self._directory = array("q")
            self._staged = staged
            for key, posting in held:
                for token in (posting,) if isinstance(posting, str) else posting:
                    self.put(key, token)
            self._staged = None
        parts = staged or {}
        least = PACK_MIN if self._pack_min is None else self._pack_min
        if sum(len(keys) for keys, _ in parts.values()) < least:
            for part_keys, part_tokens in parts.values():
                for key, token in zip(part_keys, part_tokens, strict=True):
                    put(self._changed, key, token)
            return
        keys: array[int] = array("q")
        tokens: list[str] = []
        for high in sorted(parts):
            part_keys, part_tokens = parts[high]
            order = sorted(range(len(part_keys)), key=part_keys.__getitem__)
            keys.extend(map(part_keys.__getitem__, order))
            tokens.extend(map(part_tokens.__getitem__, order))
        self._keys, self._tokens = keys, tokens
        # directory[b]: where the keys whose top DIRECTORY_BITS (as unsigned) are b begin
        self._directory = array(
            "q", (bisect_left(keys, _lowest(b)) for b in range(1 << DIRECTORY_BITS))
        )
        self._directory.append(len(keys))

    def items(self) -> Iterator[tuple[int, Members]]:
        """Every key with its posting (the changed ones as changed, emptied ones left out)."""
        keys = self._keys
        at = 0
        while at < len(keys):
            key = keys[at]
            end = self._run_end(at)
            if key not in self._changed:
                yield key, self._posting(at, end)
            at = end
        for key, value in self._changed.items():
            if value:
                yield key, value

    @property
    def packed(self) -> int:
        """How many keys the packed arrays hold."""
        return len(self._keys)

    def __len__(self) -> int:
        return sum(1 for _ in self.items())

    def _packed(self, key: int) -> Members | None:
        keys = self._keys
        if not keys:
            return None
        bucket = (key + (1 << 63)) >> (64 - DIRECTORY_BITS)
        at = bisect_left(keys, key, self._directory[bucket], self._directory[bucket + 1])
        if at == len(keys) or keys[at] != key:
            return None
        return self._posting(at, self._run_end(at))

    def _run_end(self, at: int) -> int:
        """Just past the run of keys equal to the one at `at` (the tokens sharing it)."""
        keys = self._keys
        end = at + 1
        while end < len(keys) and keys[end] == keys[at]:
            end += 1
        return end

    def _posting(self, start: int, end: int) -> Members:
        if end == start + 1:
            return self._tokens[start]
        run = self._tokens[start:end]
        return tuple(run) if len(run) <= SMALL_POSTING else set(run)

    def _own(self, key: int) -> bool:
        """Bring a packed posting into the changed dict before it changes; whether `key` has
        one."""
        packed = self._packed(key)
        if key not in self._changed and packed is not None:
            self._changed[key] = packed
        return packed is not None


def _lowest(bucket: int) -> int:
    """The least signed 64-bit key whose top DIRECTORY_BITS, as unsigned, are `bucket`."""
    return (bucket << (64 - DIRECTORY_BITS)) - (1 << 63)
