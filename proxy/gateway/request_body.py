"""Reading a request body within the size limit and checking the fields the gateway relies on.

Only fields the gateway reads are checked (and named in the 400); everything else is the
upstream's business and passes through untouched.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pydantic_core
from starlette.types import Receive, Scope

from proxy.errors import ProxyError, bad_field


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    """The whole body, refusing more than `limit` bytes by Content-Length or by count.

    Raises:
        ProxyError: 413 when the body is over the limit.
    """
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                declared = int(value)
            except ValueError:
                raise bad_field(
                    "Content-Length", f"Content-Length {value!r} is not a number"
                ) from None
            if declared > limit:
                raise _too_large(declared, limit)
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _too_large(size, limit)
        chunks.append(chunk)
        more = message.get("more_body", False)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class ClientGone(Exception):
    """The client disconnected before its request body arrived."""


def _too_large(size: int, limit: int) -> ProxyError:
    return ProxyError(
        413,
        f"request body is {size} bytes or more; the limit is {limit} "
        "(raise TENURE_MAX_BODY_BYTES to allow larger requests)",
        code="request_too_large",
    )


def _finite(text: str) -> float:
    """A JSON number as a float; one beyond a double's range (1e400) would be sent on as
    `Infinity`, which is not JSON."""
    value = float(text)
    if math.isinf(value):
        raise ProxyError(
            400,
            f"the number {text:.40} in the request body is beyond a double's range; send a "
            "smaller one",
            code="invalid_json",
        )
    return value


def parse_object(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object.

    Raises:
        ProxyError: 400 when the body is not JSON or not an object.
    """
    try:
        body = json.loads(raw, parse_float=_finite)
    except ProxyError:
        raise
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProxyError(
            400, f"request body is not valid JSON ({exc}); send a JSON object", code="invalid_json"
        ) from None
    except RecursionError:
        raise ProxyError(
            400,
            "request body nests arrays or objects too deeply to read; send a flatter JSON object",
            code="invalid_json",
        ) from None
    if not isinstance(body, dict):
        raise ProxyError(
            400,
            f"request body must be a JSON object, got {type(body).__name__}",
            code="invalid_json",
        )
    return body


_TYPE_NAMES = {str: "a string", bool: "a boolean", dict: "an object", list: "a list"}


def expect(body: dict[str, Any], name: str, kind: type, *, required: bool = False) -> None:
    if name not in body:
        if required:
            raise bad_field(name, f"'{name}' is required")
        return
    value = body[name]
    if value is None and not required:
        return
    if not isinstance(value, kind):
        raise bad_field(
            name,
            f"'{name}' must be {_TYPE_NAMES[kind]}, got {type(value).__name__} ({value!r:.60})",
        )


def dump_object(body: dict[str, Any]) -> bytes:
    """`body` as compact JSON bytes (pydantic's serializer: ~5x json.dumps on chat bodies).

    NaN and Infinity go out as the client sent them; text pydantic cannot encode (a lone
    surrogate from a `\\ud800` escape) falls back to json.dumps, which escapes it.
    """
    try:
        return pydantic_core.to_json(body, inf_nan_mode="constants")
    except pydantic_core.PydanticSerializationError:
        return json.dumps(body).encode()
