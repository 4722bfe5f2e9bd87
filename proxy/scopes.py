"""The keys Tenure puts in a request's ASGI scope, and the accessors that read them back.

The access middleware (`proxy.security`) writes them and the proxy paths (`proxy.gateway`) read
them: this module imports neither, so neither has to import the other for a key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

if TYPE_CHECKING:  # for the annotations only: the grant itself comes from the middleware
    from proxy.security.grants import Grant

REQUEST_ID = "tenure.request_id"
# Set by the chat path once it knows who is asking (never for incognito requests).
ACCESS_USER = "tenure.user"
GRANT = "tenure.grant"  # the access middleware puts the request's grant under it
CLIENT_ACCESS = "tenure_client_access"  # set on the endpoints a client token may call
E = TypeVar("E")


class ScopeCheck(Protocol):
    """What the proxy paths ask of a client token's grant: whether it may use these scopes."""

    def check_scopes(self, scopes: Iterable[str], source: str = ...) -> None: ...


def open_to_clients(endpoint: E) -> E:
    """Mark an endpoint a client token may call (it confines the user, agent and scopes)."""
    setattr(endpoint, CLIENT_ACCESS, True)
    return endpoint


def grant_of(scope: Mapping[str, Any] | Any) -> Grant | None:
    """The request's grant, or None when access is open (loopback with no key or token)."""
    return cast("Grant | None", scope.get(GRANT))


def client_grant(scope: Any) -> Grant | None:
    """The grant when it is a client token's (the one kind that is confined)."""
    grant = grant_of(scope)
    return grant if grant is not None and not grant.operator else None
