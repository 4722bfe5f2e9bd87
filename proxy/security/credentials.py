"""Which credential a request presents and what it grants: the access key
(`TENURE_API_KEY`) and operator tokens reach everything, a client token one user's memory,
the UI's session cookie what the operator who logged in reaches."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Iterable

from proxy.errors import ProxyError
from proxy.security.access import SESSION_COOKIE, Sessions, cookies_of, presented_key
from proxy.security.grants import OPERATOR, Grant
from proxy.security.tokens import TokenBook

Headers = Iterable[tuple[bytes, bytes]]
_SESSION_TOKEN = "~"  # between a token id and the session it signed (not in either alphabet)


def unauthorized(message: str) -> ProxyError:
    return ProxyError(401, message, type="authentication_error", code="invalid_api_key")


class Credentials:
    """The server's access key, its tokens and its UI sessions."""

    def __init__(self, api_key: str | None, tokens: TokenBook, sessions: Sessions) -> None:
        self.api_key = api_key
        self.tokens = tokens
        self.sessions = sessions
        # Replicas: re-read the tokens before refusing one this process has not seen (made
        # on another replica a moment ago).
        self.refresh: Callable[[], Awaitable[None]] | None = None

    @property
    def enforced(self) -> bool:
        """Whether requests need a credential: with a key or any live token, yes; otherwise
        (which `tenure serve` allows only on loopback) the one person at this machine."""
        return self.api_key is not None or self.tokens.live > 0

    def new_session(self, grant: Grant) -> str:
        """A session cookie for an operator who logged in: one made with a token names it and
        is signed with its hash, so revoking the token ends the session too."""
        token = self.tokens.by_id(grant.token_id) if grant.token_id else None
        if token is None:
            return self.sessions.new(self.api_key or "")
        return f"{token.id}{_SESSION_TOKEN}{self.sessions.new(token.token_hash)}"

    def session_valid(self, cookie: str) -> bool:
        token_id, by_token, session = cookie.rpartition(_SESSION_TOKEN)
        if not by_token:
            return self.api_key is not None and self.sessions.valid(cookie, self.api_key)
        token = self.tokens.by_id(token_id)
        if token is None or token.revoked_at is not None or not token.operator:
            return False
        return self.sessions.valid(session, token.token_hash)

    def end_session(self, cookie: str) -> None:
        """Log out: the cookie stops working, even where it was copied."""
        self.sessions.revoke(cookie.rpartition(_SESSION_TOKEN)[2])

    async def grant(self, headers: Headers) -> Grant | ProxyError:
        """What the request's key, token or session grants, or the 401 it gets."""
        headers = list(headers)
        key = presented_key(headers)
        if key is not None and self.refresh is not None and self.tokens.find(key) is None:
            await self.refresh()
        if key is None:
            session = cookies_of(headers).get(SESSION_COOKIE)
            if session is not None and self.session_valid(session):
                return OPERATOR
            return unauthorized(
                "missing or wrong access key: send Authorization: Bearer <TENURE_API_KEY or a "
                "token from `tenure tokens create`>"
            )
        return self.of_key(key)

    def of_key(self, key: str) -> Grant | ProxyError:
        if self.api_key is not None and hmac.compare_digest(key.encode(), self.api_key.encode()):
            return OPERATOR
        token = self.tokens.find(key)
        if token is None:
            return unauthorized(
                "missing or wrong access key: the one sent is neither TENURE_API_KEY nor a token "
                "of this server (`tenure tokens list` shows them)"
            )
        if token.revoked_at is not None:
            return unauthorized(
                f"token {token.id} was revoked at {token.revoked_at:%Y-%m-%d %H:%M} UTC; "
                "ask the operator for a new one (`tenure tokens create`)"
            )
        return Grant.of(token)
