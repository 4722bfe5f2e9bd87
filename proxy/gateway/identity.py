"""Who is asking and where: user, agent, scopes and per-request controls of one request.

Sources, first match wins for user and agent: the `X-Tenure-User` / `X-Agent-Id` headers,
the `/user/<id>/` URL prefix (for clients that only let you set a base URL),
`metadata.tenure_user` / `metadata.tenure_agent` (or `metadata.agent_id`), then the ids a
client supplies itself, then the configured default user.

Client-supplied ids (`metadata.user_id`, the OpenAI `user` and `safety_identifier` fields) are
what an application calls its user, often invented per install, per session or per request:
taken as they come they would split one person's memory. The rule: a client id counts only
when the operator maps it (`[client_users]` in config.toml: client id -> Tenure user) or trusts
client ids (`trust_client_ids = true`, for an app that names its real users); otherwise the
request belongs to the default user, so one person on one machine shares memory across
sessions and clients with no configuration. Claude Code's `metadata.user_id` (a JSON string,
or the older `user_<device>_account_<uuid>_session_<uuid>`) reads as its account, else its
device, never its session. Scopes are the union of `X-Tenure-Scope`
(comma-separated), the `/scope/<scope>/` URL prefix, `metadata.tenure_scope` and the scope set
with `!scope` (added by `Identity.scoped`); the configured default scopes apply when none is
given. `user:universal` always
applies (the context assembler adds it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from beliefs.model.models import SCOPE_PATTERN, storable
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
    url_user: str | None = None,
    trust_client_ids: bool = False,
    client_users: Mapping[str, str] | None = None,
) -> Identity:
    """Read identity and controls from lower-cased `headers` and the parsed request `body`.

    Raises:
        ProxyError: a scope is malformed or an id is too long (400 naming the source).
    """
    meta = body.get("metadata")
    metadata: Mapping[str, Any] = meta if isinstance(meta, Mapping) else {}
    user = _first_id(
        ("X-Tenure-User", headers.get("x-tenure-user")),
        ("URL user", url_user),
        ("metadata.tenure_user", metadata.get("tenure_user")),
    )
    client = _first_id(
        ("metadata.user_id", metadata.get("user_id")),
        ("user", body.get("user")),
        ("safety_identifier", body.get("safety_identifier")),
    )
    if user is None and client is not None:
        client = stable_client_id(client)
        mapped = (client_users or {}).get(client)
        user = mapped if mapped is not None else (client if trust_client_ids else None)
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


_CLAUDE_CODE_LEGACY = re.compile(
    r"^user_(?P<device>[0-9a-f]+)_account_(?P<account>[0-9a-f-]*)_session_[0-9a-f-]+$"
)


def stable_client_id(value: str) -> str:
    """The part of a client id that stays put: Claude Code's account, else its device (never
    its session); any other id as it is."""
    if value.startswith("{") and "device_id" in value:
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        if isinstance(parsed, dict):
            for key in ("account_uuid", "device_id"):
                found = parsed.get(key)
                if isinstance(found, str) and found.strip():
                    return found.strip()
        return value
    legacy = _CLAUDE_CODE_LEGACY.match(value)
    if legacy is not None:
        return legacy["account"] or f"user_{legacy['device']}"
    return value


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
