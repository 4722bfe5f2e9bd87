"""Who is asking and where: user, agent, scopes and per-request controls of one request.

Sources, first match wins for user and agent: the `X-Tenure-User` / `X-Agent-Id` headers, the
request's `metadata` (`tenure_user` or `user_id`, `tenure_agent` or `agent_id`), the OpenAI
`user` field, then the configured default user. Scopes are the union of `X-Tenure-Scope`
(comma-separated), the `/scope/<scope>/` URL prefix, `metadata.tenure_scope` and the scope set
with `!scope` (added by `Identity.scoped`); the configured default scopes apply when none is
given. `user:universal` always
applies (the context assembler adds it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from beliefs.models import SCOPE_PATTERN, storable
from proxy.errors import bad_field

UNIVERSAL = "user:universal"
_TRUE = frozenset({"1", "true", "yes", "on"})
MAX_ID_CHARS = 200


@dataclass(frozen=True, slots=True)
class Identity:
    user_id: str
    agent_id: str | None
    scopes: tuple[str, ...]
    incognito: bool = False
    no_extract: bool = False
    no_inject: bool = False

    def scoped(self, chat_scopes: Iterable[str], default_scopes: Iterable[str]) -> Identity:
        """Add the scopes set with `!scope`; the configured defaults apply when there are none."""
        scopes = [*self.scopes, *(s for s in chat_scopes if s not in self.scopes)]
        return replace(self, scopes=tuple(scopes or default_scopes))

    @property
    def all_scopes(self) -> tuple[str, ...]:
        """The request scopes plus `user:universal`, as recorded."""
        return self.scopes if UNIVERSAL in self.scopes else (*self.scopes, UNIVERSAL)


def flag(headers: Mapping[str, str], name: str) -> bool:
    return headers.get(name, "").strip().lower() in _TRUE


@lru_cache(maxsize=4096)  # clients send the same few scope lists again and again
def parse_scopes(raw: str, source: str) -> tuple[str, ...]:
    """Split a comma-separated scope list and check each entry.

    Raises:
        ProxyError: an entry is not `user:universal`, `domain:<slug>[/<sub>]` or
            `project:<slug>` (400 naming the source and the value).
    """
    out: list[str] = []
    for part in raw.split(","):
        scope = part.strip().lower()
        if not scope:
            continue
        if not SCOPE_PATTERN.match(scope):
            raise bad_field(
                source,
                f"{source}: scope {part.strip()!r} is not one of user:universal, "
                "domain:<slug>[/<sub>], project:<slug> (e.g. domain:code, project:billing)",
            )
        if scope not in out:
            out.append(scope)
    return tuple(out)


def header_text(value: bytes) -> str:
    """A header value as text: UTF-8 when it is (`X-Tenure-User: josé` is the same user as
    `metadata.tenure_user: "josé"`), else Latin-1 as HTTP defines."""
    try:
        return value.decode()
    except UnicodeDecodeError:
        return value.decode("latin-1")


def resolve_identity(
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    *,
    url_scope: str | None,
    default_user: str,
) -> Identity:
    """Read identity and controls from lower-cased `headers` and the parsed request `body`.

    Raises:
        ProxyError: a scope is malformed or an id is too long (400 naming the source).
    """
    meta = body.get("metadata")
    metadata: Mapping[str, Any] = meta if isinstance(meta, Mapping) else {}
    user = _first_id(
        ("X-Tenure-User", headers.get("x-tenure-user")),
        ("metadata.tenure_user", metadata.get("tenure_user")),
        ("metadata.user_id", metadata.get("user_id")),
        ("user", body.get("user")),
    )
    agent = _first_id(
        ("X-Agent-Id", headers.get("x-agent-id")),
        ("metadata.tenure_agent", metadata.get("tenure_agent")),
        ("metadata.agent_id", metadata.get("agent_id")),
    )
    scopes: list[str] = []
    sources: list[tuple[str, str | None]] = [
        ("X-Tenure-Scope", headers.get("x-tenure-scope")),
        ("URL scope", url_scope),
        ("metadata.tenure_scope", _scope_list(metadata.get("tenure_scope"))),
    ]
    for source, raw in sources:
        if raw:
            scopes.extend(s for s in parse_scopes(raw, source) if s not in scopes)
    return Identity(
        user_id=user or default_user,
        agent_id=agent,
        scopes=tuple(scopes),
        incognito=flag(headers, "x-tenure-incognito"),
        no_extract=flag(headers, "x-tenure-no-extract"),
        no_inject=flag(headers, "x-tenure-no-inject"),
    )


def _scope_list(value: Any) -> str | None:
    """`metadata.tenure_scope` as a comma-separated string or a list of strings."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return ",".join(value)
    raise bad_field(
        "metadata.tenure_scope",
        f"metadata.tenure_scope must be a string or a list of strings, got {value!r:.60}",
    )


def _first_id(*candidates: tuple[str, Any]) -> str | None:
    """The first id given; a number counts as its digits, any other non-string is refused
    (ignoring it would file the turn under the default user)."""
    for source, value in candidates:
        if value is None:
            continue
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise bad_field(
                source, f"{source} must be a string, got {type(value).__name__} ({value!r:.60})"
            )
        if not value.strip():
            continue
        value = storable(value.strip())
        if len(value) > MAX_ID_CHARS:
            raise bad_field(
                source, f"{source} is {len(value)} characters; the limit is {MAX_ID_CHARS}"
            )
        return value
    return None
