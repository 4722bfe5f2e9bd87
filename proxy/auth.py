"""Access control: with `TENURE_API_KEY` set, every call except `/healthz` must present it as
`Authorization: Bearer <key>` (Anthropic clients may send it as `x-api-key`)."""

from __future__ import annotations

import hmac
from collections.abc import Iterable

OPEN_PATHS = frozenset({"/healthz"})


def authorized(headers: Iterable[tuple[bytes, bytes]], key: str) -> bool:
    expected = key.encode()
    for name, value in headers:
        if name == b"authorization":
            scheme, _, token = value.partition(b" ")
            if scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), expected):
                return True
        elif name == b"x-api-key" and hmac.compare_digest(value.strip(), expected):
            return True
    return False


def needs_key(path: str, key: str | None) -> bool:
    return key is not None and path not in OPEN_PATHS
