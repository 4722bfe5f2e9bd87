"""The belief record and its history events: the field names are the API and export contract."""

from __future__ import annotations

import re
import secrets
import unicodedata
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, overload

from pydantic import BaseModel, ConfigDict, Field, field_validator

BeliefType = Literal["preference", "entity", "decision", "relation", "open_question"]
Subtype = Literal["expertise", "style"]
EpistemicStatus = Literal["active", "inferred", "exploratory", "superseded"]
MemoryClass = Literal["episodic", "semantic", "procedural", "working", "document"]
Delivery = Literal["always", "retrieved", "on_demand"]
ReviewState = Literal["pending", "confirmed", "rejected"]
SourceType = Literal["operator", "extracted", "agent", "import", "external", "mcp"]

MAX_ALIASES = 25
SCOPE_PATTERN = re.compile(
    r"^(user:universal|domain:[a-z0-9][a-z0-9_.-]*(/[a-z0-9][a-z0-9_.-]*)*|project:[a-z0-9][a-z0-9_.-]*)$"
)

TRUST_TIERS: dict[str, int] = {
    "operator": 3,
    "extracted": 2,
    "agent": 2,
    "import": 1,
    "external": 1,
    "mcp": 2,  # an agent's deliberate write through the memory tools
}


@overload
def as_utc(value: datetime) -> datetime: ...
@overload
def as_utc(value: None) -> None: ...
def as_utc(value: datetime | None) -> datetime | None:
    """DuckDB hands back TIMESTAMPTZ in the session zone; the model speaks UTC."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def utcnow() -> datetime:
    """Now, timezone-aware (UTC)."""
    return datetime.now(UTC)


def new_belief_id() -> str:
    return f"b-{secrets.token_hex(8)}"


def trust_tier(source_type: str) -> int:
    return TRUST_TIERS.get(source_type, 1)


class _StandingFields(Protocol):
    @property
    def superseded_by(self) -> str | None: ...
    @property
    def epistemic_status(self) -> str: ...
    @property
    def deleted_at(self) -> datetime | None: ...
    @property
    def source_type(self) -> str: ...
    @property
    def agent_id(self) -> str | None: ...
    @property
    def shared(self) -> bool: ...
    @property
    def pinned(self) -> bool: ...
    @property
    def delivery(self) -> str: ...


class Standing:
    """What a belief's fields say of its standing, for the model and the index's compact
    record (`beliefs.model.record`) alike."""

    __slots__ = ()

    @property
    def is_live(self: _StandingFields) -> bool:
        """Not superseded and not deleted: the head of its chain."""
        return (
            self.superseded_by is None
            and self.epistemic_status != "superseded"
            and self.deleted_at is None
        )

    @property
    def trust(self: _StandingFields) -> int:
        return trust_tier(self.source_type)

    @property
    def always_on(self: _StandingFields) -> bool:
        """Delivered on every turn in its scope: pinned, or delivery `always`."""
        return self.pinned or self.delivery == "always"

    def seen_by(self: _StandingFields, agent_id: str | None) -> bool:
        """Whether the agent `agent_id` (None: a request naming no agent) sees it: a belief no
        agent wrote, one its agent shared with every agent of the user, or the agent's own."""
        return self.agent_id is None or self.shared or self.agent_id == agent_id


class HistoryEvent(BaseModel):
    """One entry of a belief's append-only change log."""

    model_config = ConfigDict(extra="forbid")

    at: datetime
    event: str
    actor: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)


class Belief(BaseModel, Standing):
    """A belief as stored; `change_log` is filled from the history table on read."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str = Field(default_factory=new_belief_id, min_length=1, max_length=200)
    user_id: str = Field(min_length=1, max_length=200)
    agent_id: str | None = None  # the agent that wrote it: only that agent sees it, unless shared
    shared: bool = False  # its agent's belief, shared with every agent of the user
    type: BeliefType = "preference"
    subtype: Subtype | None = None
    canonical_name: str = Field(min_length=1, max_length=200)
    aliases: list[str] = Field(default_factory=list)
    rejected_alternatives: list[str] = Field(default_factory=list)
    content: str = ""
    why_it_matters: str = ""
    scope: list[str] = Field(default_factory=lambda: ["user:universal"], min_length=1)
    epistemic_status: EpistemicStatus = "active"
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    pinned: bool = False
    memory_class: MemoryClass | None = None
    delivery: Delivery = "retrieved"
    review_state: ReviewState = "confirmed"
    source_type: SourceType = "operator"
    user_edited: bool = False
    participants: list[str] = Field(default_factory=list)
    reinforcement_count: int = Field(default=1, ge=0)
    last_reinforced_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime | None = None
    superseded_by: str | None = None
    invalidated_at: datetime | None = None
    invalidation_reason: str | None = None
    resolved_at: datetime | None = None
    deleted_at: datetime | None = None
    provenance: dict[str, Any] = Field(default_factory=dict)
    change_log: list[HistoryEvent] = Field(default_factory=list)

    @field_validator("canonical_name")
    @classmethod
    def _snake_case(cls, value: str) -> str:
        return normalize_canonical_name(value)

    @field_validator("aliases", "rejected_alternatives")
    @classmethod
    def _clean_names(cls, value: list[str]) -> list[str]:
        return dedupe_names(value)

    @field_validator("aliases", "rejected_alternatives")
    @classmethod
    def _cap_names(cls, value: list[str]) -> list[str]:
        return value[:MAX_ALIASES]

    @field_validator("scope")
    @classmethod
    def _valid_scopes(cls, value: list[str]) -> list[str]:
        out: list[str] = []
        for raw in value:
            scope = raw.strip().lower()
            if not SCOPE_PATTERN.match(scope):
                raise ValueError(
                    f"scope {raw!r} is not one of user:universal, domain:<slug>[/<sub>], "
                    "project:<slug>"
                )
            if scope not in out:
                out.append(scope)
        return out


_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """`text` with any lone surrogate (half a UTF-16 pair, which a JSON `\\ud800` escape can
    carry) replaced by U+FFFD: the store takes valid Unicode only."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def storable_value(value: Any) -> Any:
    """`storable` applied to every string in a JSON-like value."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, list):
        return [storable_value(item) for item in value]
    if isinstance(value, dict):
        return {storable_value(k): storable_value(v) for k, v in value.items()}
    return value


def normalize_canonical_name(value: str) -> str:
    """Canonical names are snake_case: lower-cased, runs of non-word characters become `_`.

    Letters and digits of any script stay ("café", "東京"); compatibility forms are folded
    first (NFKC), so the same name typed two ways is one name.
    """
    text = unicodedata.normalize("NFKC", value).strip().lower()
    name = re.sub(r"[\W_]+", "_", text).strip("_")
    if not name:
        raise ValueError(f"canonical_name {value!r} has no letters or digits")
    return name


def dedupe_names(values: list[str]) -> list[str]:
    """Collapse whitespace, drop empties and exact duplicates, keep order.

    Case variants ("TSLint", "tslint") are kept as written: they index as one token anyway,
    and an import must export exactly what it read.
    """
    return list(dict.fromkeys(name for raw in values if (name := " ".join(str(raw).split()))))


def union_names(existing: list[str], new: list[str] | tuple[str, ...]) -> list[str]:
    """`existing` plus those of `new` not already there in any letter case, capped at 25."""
    seen = {name.lower() for name in existing}
    out = list(existing)
    for name in dedupe_names(list(new)):
        if name.lower() not in seen:
            seen.add(name.lower())
            out.append(name)
    return out[:MAX_ALIASES]


def same_content(a: str, b: str) -> bool:
    """Equal up to case, whitespace and trailing punctuation."""
    return _content_key(a) == _content_key(b)


def _content_key(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".!;: ")
