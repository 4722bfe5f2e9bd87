"""Who calls a memory tool, what a tool answers, and the reading rules every tool shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from beliefs.context.recall import recall_tags
from beliefs.model.record import AnyBelief
from proxy.gateway.identity import UNIVERSAL, Identity, parse_scopes
from proxy.security.grants import scope_allowed

CALLER = "tenure.mcp_caller"  # the ASGI scope key the HTTP endpoint puts the caller under


class ToolFailure(Exception):
    """A call the tool cannot carry out: names the argument and says what to do."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Caller:
    """Who calls a tool, resolved like a gateway request (headers, URL scope, defaults)."""

    identity: Identity
    transport: Literal["http", "stdio"]
    client: str | None = None
    scope_patterns: tuple[str, ...] = ()  # a client token's: no other scope is read or written

    @property
    def actor(self) -> str:
        """The history events' actor: the agent when known, else the user."""
        return f"mcp:{self.identity.agent_id or self.identity.user_id}"


@dataclass
class Outcome:
    """A tool's answer (JSON for the model) and what the audit row keeps of it."""

    result: dict[str, Any]
    summary: str
    belief_ids: list[str] = field(default_factory=list)


def scopes_of(caller: Caller, raw: str | None) -> tuple[str, ...]:
    """The tool's `scope` argument when given, else the connection's scopes.

    Raises:
        ToolFailure: the argument names a scope outside the caller's token's patterns.
    """
    if raw:
        scopes = parse_scopes(raw, "scope")
        outside = [s for s in scopes if not _permitted(caller, s)]
        if outside:
            raise ToolFailure(
                "scope",
                f"scope {outside[0]!r} is outside this token's scopes "
                f"({', '.join(caller.scope_patterns)}); use one within them",
            )
        return scopes
    return tuple(s for s in caller.identity.scopes if s != UNIVERSAL)


def _permitted(caller: Caller, scope: str) -> bool:
    return (
        not caller.scope_patterns
        or scope == UNIVERSAL
        or scope_allowed(scope, caller.scope_patterns)
    )


def visible_to(belief: AnyBelief, caller: Caller) -> bool:
    return (
        belief.user_id == caller.identity.user_id
        and belief.seen_by(caller.identity.agent_id)
        and (not caller.scope_patterns or any(_permitted(caller, s) for s in belief.scope))
    )


def belief_view(belief: AnyBelief, now: datetime) -> dict[str, Any]:
    """What a model needs of a belief: names, text, directive, where, and why it is special."""
    out: dict[str, Any] = {
        "id": belief.id,
        "canonical_name": belief.canonical_name,
        "type": belief.type,
        "content": belief.content,
        "why_it_matters": belief.why_it_matters,
        "scope": list(belief.scope),
    }
    if belief.aliases:
        out["aliases"] = list(belief.aliases)
    if belief.rejected_alternatives:
        out["rejected_alternatives"] = list(belief.rejected_alternatives)
    if belief.epistemic_status != "active":
        out["status"] = belief.epistemic_status
    tags = recall_tags(belief, now)
    if tags:
        out["tags"] = list(tags)
    out["source_type"] = belief.source_type
    return out
