"""The packed map of fuzzy keys: what is staged, packed and changed reads as one dict would."""

from __future__ import annotations

import random

import pytest

from beliefs.index.fuzzy_keys import FuzzyKeys
from beliefs.index.postings import Members, members, put, take


def contents(keys: FuzzyKeys) -> dict[int, frozenset[str]]:
    return {k: frozenset(members(v)) for k, v in keys.items()}


def test_staged_keys_are_found_once_packed_with_their_shared_postings() -> None:
    keys = FuzzyKeys(pack_min=0)
    keys.stage()
    for key, token in [(5, "a"), (-3, "b"), (5, "c"), (9, "d"), (2**63 - 1, "e"), (-(2**63), "f")]:
        keys.put(key, token)
    keys.pack()
    assert set(members(keys.get(5))) == {"a", "c"}
    assert members(keys.get(-3)) == ("b",) and keys.get(4) is None
    assert members(keys.get(2**63 - 1)) == ("e",) and members(keys.get(-(2**63))) == ("f",)
    assert [k for k, _ in keys.items()] == [-(2**63), -3, 5, 9, 2**63 - 1]


def test_changes_after_the_pack_stand_for_the_packed_postings() -> None:
    keys = FuzzyKeys(pack_min=0)
    keys.stage()
    keys.put(1, "x")
    keys.put(2, "y")
    keys.pack()
    keys.take(1, "x")  # emptied: no longer found, though still in the packed arrays
    keys.put(2, "z")
    keys.put(3, "w")
    keys.take(7, "nothing")  # never held: nothing recorded
    assert keys.get(1) is None and set(members(keys.get(2))) == {"y", "z"}
    assert contents(keys) == {2: frozenset({"y", "z"}), 3: frozenset({"w"})}
    keys.pack()  # the changes sorted in with the rest
    assert contents(keys) == {2: frozenset({"y", "z"}), 3: frozenset({"w"})}
    assert keys.get(1) is None and members(keys.get(3)) == ("w",)


@pytest.mark.parametrize("pack_min", [0, 10**9])  # packed, and kept in the dict
def test_random_puts_and_takes_read_as_a_dict_of_postings(pack_min: int) -> None:
    rng = random.Random(3)
    pool = [rng.getrandbits(64) - 2**63 for _ in range(40)]  # keys over every part
    for trial in range(60):
        keys = FuzzyKeys(pack_min=pack_min)
        expected: dict[int, Members] = {}
        keys.stage()
        staged = {(rng.choice(pool), f"t{rng.randrange(12)}") for _ in range(rng.randrange(200))}
        for key, token in staged:  # each pair once, as the index stages them
            keys.put(key, token)
            put(expected, key, token)
        keys.pack()
        for step in range(300):
            key, token = rng.choice(pool), f"t{rng.randrange(12)}"
            if rng.random() < 0.5:
                keys.put(key, token)
                put(expected, key, token)
            else:
                keys.take(key, token)
                take(expected, key, token)
            if step % 97 == 0:
                keys.pack()
            probe = rng.choice(pool)
            got = frozenset(members(keys.get(probe)))
            assert got == frozenset(members(expected.get(probe))), (trial, step)
        assert contents(keys) == {k: frozenset(members(v)) for k, v in expected.items()}
