"""`BeliefRecord`: a stored belief as the index holds it, a sixth of a `Belief`'s memory.

A validated pydantic `Belief` keeps its 32 fields in an instance dict of about 830 bytes; a
record keeps its own values in slots, its few-valued and seldom-set fields in two tuples that
equal records share and its two texts in one string (120 bytes in all), its lists as tuples
(shared where equal: the empty ones, scope lists) and its few-valued strings interned.
Records are read, never changed: a change is a new `Belief` written to the store, which the
index then holds as a new record. Where a full model is needed (the API, a change to make)
`to_belief` builds one.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from beliefs.model.frozen import FrozenDict, FrozenList
from beliefs.model.models import (
    Belief,
    BeliefType,
    Delivery,
    EpistemicStatus,
    MemoryClass,
    ReviewState,
    SourceType,
    Standing,
    Subtype,
    as_utc,
)

_EMPTY_DICT = FrozenDict()
_EMPTY_LIST = FrozenList()
_SHARED: dict[tuple[str, ...], tuple[str, ...]] = {}  # few-valued tuples (scopes), by value
_NUMBERS: dict[float, float] = {}
_PROFILES: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # records' profiles, by value
_MAX_SHARED = 10_000
_T = TypeVar("_T")


class BeliefRecord(Standing):
    """The fields of a stored belief (`change_log` aside), read-only by convention.

    Its own values each have a slot; the few-valued ones (`PROFILE`: user, kind, standing,
    scope, and how many of its names are aliases) are one tuple that equal records
    share, and the ones a live belief seldom sets (`REST`) one tuple that is shared while they
    are all unset: each is read through a property of the same name. Its two texts, read for
    the few beliefs a turn delivers or weighs, are one string (`TEXTS`, see `_joined`), its two
    name lists one tuple (`names`), which the index's tokens share when the names are written
    as indexed, and its canonical name is held as the index reads it (`_spaced`).
    """

    __slots__ = (
        "_canonical",
        "_profile",
        "_rest",
        "_texts",
        "_times",
        "confidence",
        "id",
        "names",
        "provenance",
    )

    _profile: tuple[Any, ...]
    _rest: tuple[Any, ...]
    _texts: str | tuple[str, str]
    _times: int  # `TIMES` as one number (`_packed_times`)
    _canonical: str | tuple[str]
    names: tuple[str, ...]  # its aliases, then its rejected alternatives (the index's tokens)
    id: str
    user_id: str
    agent_id: str | None
    shared: bool
    type: BeliefType
    subtype: Subtype | None
    canonical_name: str
    aliases: tuple[str, ...]
    rejected_alternatives: tuple[str, ...]
    content: str
    why_it_matters: str
    scope: tuple[str, ...]
    epistemic_status: EpistemicStatus
    confidence: float
    pinned: bool
    memory_class: MemoryClass | None
    delivery: Delivery
    review_state: ReviewState
    source_type: SourceType
    user_edited: bool
    participants: tuple[str, ...]
    reinforcement_count: int
    last_reinforced_at: datetime | None
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None
    superseded_by: str | None
    invalidated_at: datetime | None
    invalidation_reason: str | None
    resolved_at: datetime | None
    deleted_at: datetime | None
    provenance: dict[str, Any]

    @classmethod
    def of(cls, belief: Belief) -> BeliefRecord:
        """The record of a belief as stored (see `beliefs.store.rows.stored`)."""
        return cls.from_values([getattr(belief, name) for name in FIELDS])

    @classmethod
    def from_values(cls, values: Sequence[Any]) -> BeliefRecord:
        """A record of field values in `FIELDS` order, already valid (a stored row's, or a
        validated belief's): lists become tuples, equal small values are shared."""
        record = cls.__new__(cls)
        converted = [
            value if convert is None else convert(value)
            for convert, value in zip(_CONVERTERS, values, strict=True)
        ]
        for setter, at in _OWN:
            setter(record, converted[at])
        record._texts = _joined(*map(converted.__getitem__, _TEXTS_AT))
        created, updated, reinforced = map(converted.__getitem__, _TIMES_AT)
        record._times = _packed_times(created, updated, reinforced)
        record._canonical = _spaced(converted[_CANONICAL_AT])
        aliases, rejected = map(converted.__getitem__, _NAMES_AT)
        record.names = aliases + rejected if rejected else aliases
        profile = (*map(converted.__getitem__, _PROFILE_AT), len(aliases))
        record._profile = _shared_profile(profile)
        rest = tuple(map(converted.__getitem__, _REST_AT))
        record._rest = _NO_REST if rest == _NO_REST else rest
        return record

    def to_belief(self) -> Belief:
        """The full model (its lists new, so changing them leaves the record alone), built
        without validation: the record's values are valid."""
        data: dict[str, Any] = {}
        for name in FIELDS:
            value = getattr(self, name)
            if type(value) is tuple:
                value = list(value) if value else _EMPTY_LIST
            data[name] = value
        data["change_log"] = _EMPTY_LIST
        belief = Belief.__new__(Belief)
        object.__setattr__(belief, "__dict__", data)
        object.__setattr__(belief, "__pydantic_fields_set__", _ALL_FIELDS)
        object.__setattr__(belief, "__pydantic_extra__", None)
        object.__setattr__(belief, "__pydantic_private__", None)
        return belief

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BeliefRecord):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in FIELDS)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"BeliefRecord({self.id!r}, {self.canonical_name!r})"


FIELDS: tuple[str, ...] = tuple(f for f in Belief.model_fields if f != "change_log")  # row order
PROFILE: tuple[str, ...] = (  # few distinct tuples of these in a store: shared
    "user_id",
    "agent_id",
    "shared",
    "type",
    "subtype",
    "epistemic_status",
    "pinned",
    "memory_class",
    "delivery",
    "review_state",
    "source_type",
    "user_edited",
    "scope",
    "reinforcement_count",
)
REST: tuple[str, ...] = (  # unset on almost every live belief
    "participants",
    "expires_at",
    "superseded_by",
    "invalidated_at",
    "invalidation_reason",
    "resolved_at",
    "deleted_at",
)
TEXTS = ("content", "why_it_matters")
TIMES = ("created_at", "updated_at", "last_reinforced_at")  # one number (`_packed_times`)
NAMES = ("aliases", "rejected_alternatives")
CANONICAL = ("canonical_name",)  # held as the index reads it (`_spaced`)
OWN = tuple(f for f in FIELDS if f not in (*PROFILE, *REST, *TEXTS, *TIMES, *NAMES, *CANONICAL))
_HELD = {"_profile", "_rest", "_texts", "_times", "names", "_canonical"}
assert set(OWN) | _HELD == set(BeliefRecord.__slots__), "BeliefRecord's fields out of step"
# Building the model as `model_construct` does, minus its per-field alias and default lookups:
# valid only while the model has none of those to honour. Every field is set, so one fields
# set serves every built belief (pydantic would otherwise keep one per belief).
assert not Belief.__pydantic_post_init__ and not Belief.__private_attributes__
assert all(f.alias is None and f.validation_alias is None for f in Belief.model_fields.values())
_ALL_FIELDS = set(Belief.model_fields)


def _interned(value: str | None) -> str | None:
    return None if value is None else sys.intern(value)


def _names(values: Sequence[str] | None) -> tuple[str, ...]:
    # interned: the index's tokens are often the same text
    return tuple(sys.intern(v) for v in values) if values else ()


def _shared(values: Sequence[str] | None) -> tuple[str, ...]:
    if not values:
        return ()
    found = _SHARED.get(tuple(values))
    return _kept(_SHARED, tuple(sys.intern(v) for v in values)) if found is None else found


def _shared_number(value: float) -> float:
    # confidences take a few values (0.9, 0.8): one float object each instead of one per row
    return _kept(_NUMBERS, value)


def _provenance(value: dict[str, Any] | None) -> dict[str, Any]:
    return value if value else _EMPTY_DICT


def _shared_profile(profile: tuple[Any, ...]) -> tuple[Any, ...]:
    return _kept(_PROFILES, profile)


def _kept(table: dict[_T, _T], value: _T) -> _T:
    """The object `table` holds equal to `value`, else `value` itself, kept while the table
    has room (at most _MAX_SHARED)."""
    found = table.get(value)
    if found is None:
        found = value
        if len(table) < _MAX_SHARED:
            table[value] = value
    return found


def _joined(content: str, why_it_matters: str) -> str | tuple[str, str]:
    """The two texts as one string, split at its first NUL: one object of about 50 bytes
    less, read back by a slice when asked for (a content holding a NUL stays apart)."""
    if type(content) is not str or type(why_it_matters) is not str or "\0" in content:
        return (content, why_it_matters)
    return f"{content}\0{why_it_matters}"


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_BITS = 64  # each of the three counts' field in the packed number
_MASK = (1 << _BITS) - 1
_NEVER = 1  # the reinforcement field of a belief never reinforced (0: at its creation)


def _packed_times(created: datetime, updated: datetime, reinforced: datetime | None) -> int:
    """The record's three times as one number: the creation in microseconds since the epoch,
    the last reinforcement's distance from it (`_NEVER`: never reinforced) and the last
    update's from that, each signed count folded to a natural number (`_fold`) in a field of
    its own. Times that are equal (a belief never changed) add nothing: the number is then a
    32-byte int, and at most 48 bytes, where each time held as itself is a 48-byte datetime
    object. Read back as UTC datetimes (`_time`)."""
    start = _micros(created)
    if reinforced is None:
        since, last = _NEVER, start
    else:
        last = _micros(reinforced)
        since = _fold(last - start) + 1 if last != start else 0
    return _fold(start) | since << _BITS | _fold(_micros(updated) - last) << 2 * _BITS


def _micros(time: datetime) -> int:
    return ((time if time.tzinfo is UTC else as_utc(time)) - _EPOCH) // _MICROSECOND


def _fold(count: int) -> int:
    return count << 1 if count >= 0 else ((-count) << 1) - 1


def _unfold(folded: int) -> int:
    return folded >> 1 if not folded & 1 else -((folded + 1) >> 1)


def _unpacked(packed: int) -> tuple[int, int, int | None]:
    """The `TIMES` (created, updated, reinforced: None if never) in microseconds since the
    epoch."""
    start = _unfold(packed & _MASK)
    since = (packed >> _BITS) & _MASK
    reinforced = None if since == _NEVER else start + (_unfold(since - 1) if since else 0)
    last = start if reinforced is None else reinforced
    return start, last + _unfold(packed >> 2 * _BITS), reinforced


def _time(at: int) -> property:
    """Time `at` of the record's packed `TIMES`, read as an attribute."""

    def read(record: BeliefRecord) -> datetime | None:
        count = _unpacked(record._times)[at]
        return None if count is None else _EPOCH + timedelta(microseconds=count)

    return property(read)


_SNAKE = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*")


def _spaced(canonical_name: str) -> str | tuple[str]:
    """How a record holds its canonical name: a snake_case name ("ldap_proxy", "postgres") as
    the index reads it ("ldap proxy"), so the index's token is that one string; any other name
    as it is, or in a tuple when it holds a space (it is read back as written)."""
    if _SNAKE.fullmatch(canonical_name):
        return canonical_name.replace("_", " ")
    return (canonical_name,) if " " in canonical_name else canonical_name


def _canonical_name(record: BeliefRecord) -> str:
    held = record._canonical
    return held.replace(" ", "_") if type(held) is str else held[0]


def reinforced_seconds(record: BeliefRecord) -> float:
    """Seconds since the epoch of the record's last reinforcement, else of its last update:
    what `(record.last_reinforced_at or record.updated_at).timestamp()` gives (the same float),
    read from its packed times without making the datetimes (ranking asks for every
    candidate)."""
    _, updated, reinforced = _unpacked(record._times)
    return (updated if reinforced is None else reinforced) / 1_000_000


def spaced_name(record: BeliefRecord) -> str | None:
    """The record's canonical name as the index reads it (`query.normalize_name`), when the
    record holds it so (a snake_case name), else None."""
    held = record._canonical
    if type(held) is not str:
        return None
    return held if " " in held or _SNAKE.fullmatch(held) else None


def _content(record: BeliefRecord) -> str:
    texts = record._texts
    if isinstance(texts, str):
        return texts[: texts.index("\0")]
    return texts[0]


def _why_it_matters(record: BeliefRecord) -> str:
    texts = record._texts
    if isinstance(texts, str):
        return texts[texts.index("\0") + 1 :]
    return texts[1]


def _aliases(record: BeliefRecord) -> tuple[str, ...]:
    names, end = record.names, record._profile[_ALIASES_END]
    return names if end == len(names) else names[:end]


def _rejected_alternatives(record: BeliefRecord) -> tuple[str, ...]:
    return record.names[record._profile[_ALIASES_END] :]


def _field(of: str, at: int) -> property:
    """Field `at` of the tuple in the slot `of`, read as an attribute."""
    if of == "_profile":

        def read(record: BeliefRecord) -> Any:
            return record._profile[at]
    else:

        def read(record: BeliefRecord) -> Any:
            return record._rest[at]

    return property(read)


_CONVERT: dict[str, Any] = {
    **dict.fromkeys(
        (
            "user_id",
            "agent_id",
            "type",
            "subtype",
            "epistemic_status",
            "memory_class",
            "delivery",
            "review_state",
            "source_type",
        ),
        _interned,
    ),
    "aliases": _names,
    "rejected_alternatives": _names,
    "scope": _shared,
    "participants": _shared,
    "confidence": _shared_number,
    "provenance": _provenance,
}
_CONVERTERS = tuple(_CONVERT.get(name) for name in FIELDS)
_OWN = tuple((getattr(BeliefRecord, name).__set__, FIELDS.index(name)) for name in OWN)
_PROFILE_AT = tuple(FIELDS.index(name) for name in PROFILE)
_ALIASES_END = len(PROFILE)  # the profile's last item: how many of `names` are aliases
_REST_AT = tuple(FIELDS.index(name) for name in REST)
_TEXTS_AT = tuple(FIELDS.index(name) for name in TEXTS)
_TIMES_AT = tuple(FIELDS.index(name) for name in TIMES)
_NAMES_AT = tuple(FIELDS.index(name) for name in NAMES)
_CANONICAL_AT = FIELDS.index("canonical_name")
_NO_REST: tuple[Any, ...] = ((), None, None, None, None, None, None)
for _at, _name in enumerate(PROFILE):
    setattr(BeliefRecord, _name, _field("_profile", _at))
for _at, _name in enumerate(REST):
    setattr(BeliefRecord, _name, _field("_rest", _at))
for _at, _name in enumerate(TIMES):
    setattr(BeliefRecord, _name, _time(_at))
BeliefRecord.canonical_name = property(_canonical_name)  # type: ignore[assignment]
BeliefRecord.content = property(_content)  # type: ignore[assignment]
BeliefRecord.why_it_matters = property(_why_it_matters)  # type: ignore[assignment]
BeliefRecord.aliases = property(_aliases)  # type: ignore[assignment]
BeliefRecord.rejected_alternatives = property(_rejected_alternatives)  # type: ignore[assignment]


AnyBelief = Belief | BeliefRecord  # what reads a belief's fields takes either


def as_belief(belief: AnyBelief) -> Belief:
    """The full model of either kind (a record's built anew)."""
    return belief if isinstance(belief, Belief) else belief.to_belief()


def fields_json(belief: AnyBelief) -> dict[str, Any]:
    """The belief's stored fields as JSON values, its change log left out."""
    return as_belief(belief).model_dump(mode="json", exclude={"change_log"})
