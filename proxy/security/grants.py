"""What a request's credential lets it reach: everything (the access key, an operator token,
a UI session), or one user's memory, optionally only as some agents and in some scopes (a
client token). Every route that takes a user, agent or scope from the request confines it
here, so a client token can name only what it carries."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from proxy.errors import ProxyError
from proxy.gateway.identity import UNIVERSAL, Identity
from proxy.security.tokens import Token


def scope_allowed(scope: str, patterns: Iterable[str]) -> bool:
    """`project:*` covers every project, `domain:code` also `domain:code/sql`."""
    for pattern in patterns:
        if pattern.endswith("*"):
            if scope.startswith(pattern[:-1]):
                return True
        elif scope == pattern or scope.startswith(pattern + "/"):
            return True
    return False


def refused(message: str, param: str | None = None) -> ProxyError:
    return ProxyError(403, message, type="permission_error", param=param, code="not_permitted")


@dataclass(frozen=True, slots=True)
class Grant:
    """Who the credential acts for; no user means the operator, who reaches everything."""

    user_id: str | None
    agents: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    token_id: str | None = None  # None: the access key or a UI session

    @classmethod
    def of(cls, token: Token) -> Grant:
        return cls(token.user_id, token.agents, token.scopes, token.id)

    @property
    def operator(self) -> bool:
        return self.user_id is None

    def user(self, named: str | None, source: str = "user") -> str | None:
        """The user a request acts for: this token's, whatever it named.

        Raises:
            ProxyError: 403 when it names another user.
        """
        if self.user_id is None or named in (None, "", self.user_id):
            return named or self.user_id
        raise refused(
            f"this token belongs to user {self.user_id!r}; it cannot act for {named!r} "
            f"(named by {source}): send no user, or a token of that user",
            param=source,
        )

    def agent(self, named: str | None, source: str = "agent") -> str | None:
        """The agent a request acts as: one of this token's agents (its first when none is
        named), any when the token names none.

        Raises:
            ProxyError: 403 when it names an agent outside the token's.
        """
        if not self.agents:
            return named
        if named is None:
            return self.agents[0]
        if named in self.agents:
            return named
        raise refused(
            f"this token acts only as agent {', '.join(map(repr, self.agents))}; "
            f"it cannot act as {named!r} (named by {source})",
            param=source,
        )

    def check_scopes(self, scopes: Iterable[str], source: str = "scope") -> None:
        """Raises:
        ProxyError: 403 naming a scope outside this token's patterns.
        """
        if not self.scopes:
            return
        for scope in scopes:
            if scope != UNIVERSAL and not scope_allowed(scope, self.scopes):
                raise refused(
                    f"this token may use scopes matching {', '.join(self.scopes)}; {scope!r} "
                    f"is outside them: name a scope within them ({source}, X-Tenure-Scope)",
                    param=source,
                )

    def usable(self, scopes: Iterable[str]) -> tuple[str, ...]:
        """The scopes within this token's patterns (a chat scope another token set is not)."""
        return tuple(
            s for s in scopes if not self.scopes or s == UNIVERSAL or scope_allowed(s, self.scopes)
        )

    def confine(self, identity: Identity) -> Identity:
        """The identity a request resolved, held to this grant (see `user`, `agent`,
        `check_scopes`); a request that named no user gets the token's."""
        if self.operator:
            return identity
        self.check_scopes(identity.scopes)
        return replace(
            identity,
            user_id=self.user(identity.user_id, "X-Tenure-User, /user/<id>/ or metadata")
            or identity.user_id,
            agent_id=self.agent(identity.agent_id, "X-Agent-Id or metadata"),
        )

    def sees(self, user_id: str, agent_id: str | None, scopes: Iterable[str]) -> bool:
        """Whether a belief with these owners and scopes is within reach."""
        if self.operator:
            return True
        if user_id != self.user_id:
            return False
        if self.agents and agent_id not in (None, *self.agents):
            return False
        return not self.scopes or any(
            s == UNIVERSAL or scope_allowed(s, self.scopes) for s in scopes
        )

    def sees_json(self, item: Any) -> bool:
        """`sees` for a belief as the API writes it (any other value is kept)."""
        if not isinstance(item, dict) or "user_id" not in item:
            return True
        return self.sees(item["user_id"], item.get("agent_id"), item.get("scope") or ())


OPERATOR = Grant(None)
