"""Namespace rules: ranking bonuses, instruction templates and default memory classes by scope.

A rule's pattern is a scope where `*` matches any remainder and `${user_id}` exactly one segment
that is the caller's id; a rule also covers the sub-scopes of its pattern (`domain:code` covers
`domain:code/python`). Bonuses of all matching rules add up (relevance = score x (1 + sum));
for templates and memory classes the longest matching pattern wins.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property, lru_cache

from pydantic import BaseModel, ConfigDict, Field, field_validator

from beliefs.model.models import MemoryClass, utcnow
from beliefs.model.record import AnyBelief

PLACEHOLDER = "{{content}}"
USER_TOKEN = "${user_id}"
BONUS_WARNING = 0.3
SOURCE_LABEL = "(SOURCE)"
MEMORY_LABEL = "(MEMORY)"
MAX_KEPT_SCOPES = 100_000  # (scopes, user) answers kept before they are dropped in bulk
_PATTERN = re.compile(r"^(user|domain|project):[A-Za-z0-9_.\-/*${}]*$")
_SEGMENT = re.compile(r"^[^/:]+$")


def new_rule_id() -> str:
    return f"r-{secrets.token_hex(6)}"


class Rule(BaseModel):
    """One namespace rule."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str = Field(default_factory=new_rule_id)
    pattern: str = Field(min_length=3, max_length=200)
    bonus: float = Field(default=0.0, ge=0.0, le=1.0)
    template: str | None = Field(default=None, max_length=4000)
    memory_class: MemoryClass | None = None
    default_key: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)

    @field_validator("pattern")
    @classmethod
    def _valid_pattern(cls, value: str) -> str:
        pattern = value.strip().lower().replace("${user_id}", USER_TOKEN)
        if not _PATTERN.match(pattern) or ("$" in pattern.replace(USER_TOKEN, "")):
            raise ValueError(
                f"pattern {value!r} must look like domain:<slug>, project:*, "
                "domain:notes/${user_id} or user:universal"
            )
        return pattern

    @field_validator("template")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value if value and value.strip() else None

    @property
    def warnings(self) -> list[str]:
        out = []
        if self.bonus > BONUS_WARNING:
            out.append(
                f"bonus {self.bonus} is above {BONUS_WARNING}: weak hits in {self.pattern} will "
                "pass the minimum score their own relevance would never reach"
            )
        return out

    @property
    def label(self) -> str | None:
        """`(SOURCE)` or `(MEMORY)` when the template opens with one."""
        text = (self.template or "").lstrip()
        for label in (SOURCE_LABEL, MEMORY_LABEL):
            if text.startswith(label):
                return label
        return None

    def matches(self, scope: str, user_id: str) -> bool:
        return _compile(self.pattern, user_id).match(scope) is not None

    def render(self, content: str) -> str:
        """The template with the grouped hits in place of `{{content}}` (appended if absent)."""
        template = self.template or PLACEHOLDER
        if PLACEHOLDER in template:
            return template.replace(PLACEHOLDER, content)
        return f"{template.rstrip()}\n{content}"


@lru_cache(maxsize=4096)
def _compile(pattern: str, user_id: str) -> re.Pattern[str]:
    parts: list[str] = []
    for piece in re.split(r"(\*|\$\{user_id\})", pattern):
        if piece == "*":
            parts.append(".*")
        elif piece == USER_TOKEN:
            # exactly one segment, and it must be the caller's id
            parts.append(re.escape(user_id) if _SEGMENT.match(user_id) else "(?!)")
        else:
            parts.append(re.escape(piece))
    return re.compile("^" + "".join(parts) + "(?:/.*)?$")


@dataclass(frozen=True)
class RuleSet:
    """The live rules, applied per caller."""

    rules: tuple[Rule, ...] = ()
    # Every request weighs each candidate, and the answer depends only on the belief's scopes
    # and user: kept per (scopes, user), of which a store has few, so a candidate never met
    # before costs a lookup (a store of a million beliefs meets thousands on a turn).
    _per_scopes: dict[tuple[tuple[str, ...], str], tuple[float, Rule | None]] = field(
        init=False, compare=False, repr=False, default_factory=dict
    )

    def matching(self, scopes: Iterable[str], user_id: str) -> list[Rule]:
        scopes = list(scopes)
        return [r for r in self.rules if any(r.matches(s, user_id) for s in scopes)]

    def bonus(self, belief: AnyBelief) -> float:
        """1 + the sum of the bonuses of every rule matching one of the belief's scopes."""
        return self._for(belief)[0]

    @cached_property
    def weight(self) -> Callable[[AnyBelief], float]:
        """`bonus` as one object for as long as these rules hold: search keeps each belief's
        bonus against it, so a belief is weighed once per rules and belief version."""
        return self.bonus

    def template_rule(self, belief: AnyBelief) -> Rule | None:
        """The rule whose instruction template a hit on `belief` is grouped under."""
        return self._for(belief)[1]

    def most(self, scope_lists: Iterable[Sequence[str]], user_id: str) -> float:
        """The largest `bonus` of a belief of `user_id` holding one of `scope_lists` (1.0 for
        none): for a user's scope lists, the most the rules weigh any of the user's beliefs,
        often well below `max_bonus` (which counts every rule matching at once)."""
        return max((self._of(scopes, user_id)[0] for scopes in scope_lists), default=1.0)

    def _for(self, belief: AnyBelief) -> tuple[float, Rule | None]:
        return self._of(belief.scope, belief.user_id)

    def _of(self, scopes: Sequence[str], user_id: str) -> tuple[float, Rule | None]:
        key = (scopes if type(scopes) is tuple else tuple(scopes), user_id)
        found = self._per_scopes.get(key)
        if found is None:
            matching = self.matching(key[0], key[1])
            found = (
                1.0 + sum(r.bonus for r in matching),
                _longest([r for r in matching if r.template]),
            )
            if len(self._per_scopes) >= MAX_KEPT_SCOPES:
                self._per_scopes.clear()
            self._per_scopes[key] = found
        return found

    def memory_class(self, scopes: Sequence[str], user_id: str) -> MemoryClass | None:
        rule = _longest([r for r in self.matching(scopes, user_id) if r.memory_class])
        return rule.memory_class if rule else None

    @property
    def max_bonus(self) -> float:
        """The most `bonus` can give any belief: every rule with a positive bonus matching."""
        return 1.0 + sum(r.bonus for r in self.rules if r.bonus > 0)

    @property
    def has_bonuses(self) -> bool:
        return any(r.bonus for r in self.rules)


def _longest(rules: list[Rule]) -> Rule | None:
    return max(rules, key=lambda r: (len(r.pattern), r.pattern), default=None)


# Rules for the bundled scope families. They ship through a migration that only adds: a default
# the operator edited or deleted is never restored (each carries a `default_key`).
DEFAULT_RULES: tuple[Rule, ...] = (
    Rule(
        id="r-default-universal",
        pattern="user:universal",
        bonus=0.05,
        memory_class="semantic",
        default_key="universal-v1",
        template=f"{MEMORY_LABEL} The user's standing preferences, whatever the task:\n"
        + PLACEHOLDER,
    ),
    Rule(
        id="r-default-project",
        pattern="project:*",
        bonus=0.08,
        memory_class="semantic",
        default_key="project-v1",
        template=f"{MEMORY_LABEL} Notes on this project; apply them to this project only:\n"
        + PLACEHOLDER,
    ),
    Rule(
        id="r-default-docs",
        pattern="domain:docs",
        bonus=0.12,
        memory_class="document",
        default_key="docs-v1",
        template=f"{SOURCE_LABEL} Passages from the user's own documents; answer from them and "
        "cite them:\n" + PLACEHOLDER,
    ),
    Rule(
        id="r-default-scratch",
        pattern="domain:scratch",
        bonus=0.03,
        memory_class="working",
        default_key="scratch-v1",
        template=f"{MEMORY_LABEL} Scratch notes, for the current task only:\n" + PLACEHOLDER,
    ),
)
