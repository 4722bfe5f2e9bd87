"""Lists and dicts that refuse change, so loaded beliefs can share equal values.

A store of a million beliefs holds a million empty `participants` lists and a few distinct
scope lists; loaded rows share one object per distinct value instead. Sharing is only safe if
no one changes a shared value in place, so these raise on any change (assign a new list
instead, as the model's validated assignment does). Copies, pickles and dumps are plain.
"""

from __future__ import annotations

import copy
from typing import Any, NoReturn


def _refuse(self: object, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(
        f"this {type(self).__name__} is shared by many loaded beliefs and cannot change in "
        "place; assign a new value instead"
    )


class FrozenList(list[Any]):
    """A list no one may change (equal to, and dumped as, a plain list)."""

    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(item, memo) for item in self]

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return list, (list(self),)


class FrozenDict(dict[Any, Any]):
    """A dict no one may change (equal to, and dumped as, a plain dict)."""

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return {copy.deepcopy(k, memo): copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return dict, (dict(self),)
