"""Access tokens: each acts for one user (optionally only as some agents and in some scopes),
or, as an operator token, for the whole server. The store keeps a token's SHA-256, never the
token itself, which is shown once when it is made."""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from beliefs.model.errors import Invalid, NotFound
from beliefs.model.models import SCOPE_PATTERN, as_utc, utcnow
from beliefs.store.belief_store import BeliefStore

PREFIX = "tnr_"
MAX_ID_CHARS = 200
_COLUMNS = "id, token_hash, user_id, agents, scopes, created_at, revoked_at"


def token_hash(token: str) -> str:
    # A token is 256 random bits, so one fast hash suffices: there is nothing to guess at.
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Token:
    """A stored token: who it acts for (no user: the operator), and whether it still works."""

    id: str
    token_hash: str
    user_id: str | None
    agents: tuple[str, ...]
    scopes: tuple[str, ...]
    created_at: datetime
    revoked_at: datetime | None = None

    @property
    def operator(self) -> bool:
        return self.user_id is None

    def as_json(self) -> dict[str, Any]:
        """What `tenure tokens list` and `GET /api/tokens` show (never the hash)."""
        return {
            "id": self.id,
            "kind": "operator" if self.operator else "client",
            "user": self.user_id,
            "agents": list(self.agents),
            "scopes": list(self.scopes),
            "created_at": self.created_at.isoformat(),
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
        }


def checked_grant(
    user: str | None, agents: Sequence[str], scopes: Sequence[str], *, operator: bool
) -> tuple[str | None, tuple[str, ...], tuple[str, ...]]:
    """The (user, agents, scope patterns) a new token is made with.

    Raises:
        Invalid: neither or both of a user and `operator`, an empty or overlong id, or a scope
            pattern that is not `<kind>:<slug>` with an optional trailing `*`.
    """
    if operator == bool(user):
        raise Invalid(
            "a token acts either for one user (--user alice) or as the operator (--operator)",
            field="user",
        )
    if operator and (agents or scopes):
        raise Invalid("an operator token reaches every agent and scope; drop --agent and --scope")
    for field, values in (("user", [user] if user else []), ("agent", agents)):
        for value in values:
            if not value.strip() or len(value) > MAX_ID_CHARS:
                raise Invalid(f"{field} {value!r}: use 1 to {MAX_ID_CHARS} characters", field=field)
    patterns = tuple(s.strip().lower() for s in scopes)
    for pattern in patterns:
        # `project:*` and `domain:code/*` stand for every scope they begin.
        example = pattern[:-1] + "x" if pattern.endswith("*") else pattern
        if not SCOPE_PATTERN.match(example):
            raise Invalid(
                f"scope pattern {pattern!r}: use a scope (domain:code, project:billing) "
                "or one ending in * (project:*, domain:code/*)",
                field="scope",
            )
    return (
        user.strip() if user else None,
        tuple(dict.fromkeys(a.strip() for a in agents)),
        tuple(dict.fromkeys(patterns)),
    )


def create_token(
    store: BeliefStore,
    *,
    user: str | None,
    agents: Sequence[str] = (),
    scopes: Sequence[str] = (),
    operator: bool = False,
) -> tuple[Token, str]:
    """Store a new token; returns it with the token text (the only time it is seen).

    Raises:
        Invalid: see `checked_grant`.
    """
    user, agents, scopes = checked_grant(user, agents, scopes, operator=operator)
    text = PREFIX + secrets.token_urlsafe(32)
    token = Token(
        id="tok_" + secrets.token_hex(6),
        token_hash=token_hash(text),
        user_id=user,
        agents=agents,
        scopes=scopes,
        created_at=utcnow(),
    )
    store.execute(
        f"INSERT INTO access_tokens ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            token.id,
            token.token_hash,
            token.user_id,
            json.dumps(token.agents),
            json.dumps(token.scopes),
            token.created_at,
            None,
        ],
    )
    return token, text


def list_tokens(store: BeliefStore) -> list[Token]:
    rows = store.execute(f"SELECT {_COLUMNS} FROM access_tokens ORDER BY created_at").fetchall()
    return [_token(row) for row in rows]


def revoke_token(store: BeliefStore, token_id: str) -> Token:
    """Revoke a token at once (revoking it again changes nothing).

    Raises:
        NotFound: no token has that id.
    """
    store.execute(
        "UPDATE access_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
        [utcnow(), token_id],
    )
    row = store.execute(f"SELECT {_COLUMNS} FROM access_tokens WHERE id = ?", [token_id]).fetchone()
    if row is None:
        raise NotFound(f"no token {token_id!r}; `tenure tokens list` shows the ids", field="id")
    return _token(row)


def _token(row: Sequence[Any]) -> Token:
    return Token(
        id=str(row[0]),
        token_hash=str(row[1]),
        user_id=None if row[2] is None else str(row[2]),
        agents=tuple(json.loads(row[3])),
        scopes=tuple(json.loads(row[4])),
        created_at=as_utc(row[5]),
        revoked_at=None if row[6] is None else as_utc(row[6]),
    )


class TokenBook:
    """This process's copy of the stored tokens, by hash: asked on every request, so it never
    waits on the store; changes made here apply at once, and replicas reload it often."""

    def __init__(self, tokens: Iterable[Token] = ()) -> None:
        self._by_hash: dict[str, Token] = {}
        self._by_id: dict[str, Token] = {}
        self.replace(tokens)

    def replace(self, tokens: Iterable[Token]) -> None:
        by_id = {t.id: t for t in tokens}
        self._by_hash = {t.token_hash: t for t in by_id.values()}
        self._by_id = by_id
        self.live = sum(1 for t in by_id.values() if t.revoked_at is None)

    def put(self, token: Token) -> None:
        self.replace([*(t for t in self._by_id.values() if t.id != token.id), token])

    def find(self, text: str) -> Token | None:
        return self._by_hash.get(token_hash(text))

    def by_id(self, token_id: str) -> Token | None:
        return self._by_id.get(token_id)
