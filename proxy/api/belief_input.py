"""Request bodies of the belief API: read with a size cap, type-checked per field, and
validated against the belief model so every error names the field that is wrong."""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta
from typing import Any, get_args

from pydantic import ValidationError
from starlette.requests import Request

from beliefs.model.errors import reason
from beliefs.model.models import (
    Belief,
    BeliefType,
    Delivery,
    EpistemicStatus,
    ReviewState,
    Subtype,
    utcnow,
)
from proxy.errors import ProxyError, bad_field

MAX_BODY_BYTES = 256 * 1024
# A century: far enough for any real expiry, near enough that the date stays representable.
MAX_EXPIRY_DAYS = 36_500

# Fields an operator may set through PATCH, with the JSON type each must have.
EDITABLE: dict[str, str] = {
    "content": "str",
    "canonical_name": "str",
    "aliases": "names",
    "rejected_alternatives": "names",
    "why_it_matters": "str",
    "scope": "names",
    "epistemic_status": "status",
    "pinned": "bool",
    "delivery": "delivery",
    "expires_in_days": "days?",  # sets expires_at = now + days; null clears it
}
# POST may also set these (the write path is always `operator`).
CREATABLE: dict[str, str] = {
    **EDITABLE,
    "user_id": "str",
    "agent_id": "str?",
    "type": "type",
    "subtype": "subtype?",
    "confidence": "number",
    "participants": "names",
}
_CHOICES: dict[str, tuple[str, ...]] = {
    "status": tuple(s for s in get_args(EpistemicStatus) if s != "superseded"),
    "delivery": get_args(Delivery),
    "type": get_args(BeliefType),
    "subtype?": get_args(Subtype),
}
REVIEW_STATES: tuple[str, ...] = get_args(ReviewState)


async def read_json(request: Request) -> dict[str, Any]:
    """The body as a JSON object.

    Raises:
        ProxyError: 413 over MAX_BODY_BYTES; 400 when it is not a JSON object.
    """
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ProxyError(
                413, f"the body is over {MAX_BODY_BYTES} bytes; send less", param="body"
            )
        chunks.append(chunk)
    raw = b"".join(chunks)
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        raise bad_field("body", "the body is not valid JSON; send a JSON object") from None
    except RecursionError:
        raise bad_field(
            "body", "the body nests too deeply to read; send a flatter object"
        ) from None
    if not isinstance(body, dict):
        raise bad_field("body", f"the body is a JSON {type(body).__name__}; send a JSON object")
    for name, value in body.items():
        try:  # the encoder walks the value: a lone surrogate anywhere in it cannot be UTF-8
            json.dumps({name: value}, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            raise bad_field(
                str(name).encode("utf-8", "backslashreplace").decode(),
                f"{name!r} holds a lone surrogate (like \\ud800), which is not text; "
                "send valid Unicode",
            ) from None
    return body


def check_fields(body: dict[str, Any], accepted: dict[str, str]) -> dict[str, Any]:
    """The body's fields, each of the JSON type it must have.

    Raises:
        ProxyError: 400 naming the first unknown or wrongly typed field.
    """
    for name, value in body.items():
        kind = accepted.get(name)
        if kind is None:
            raise bad_field(
                name, f"field {name!r} cannot be set here; accepted: {', '.join(accepted)}"
            )
        problem = _type_problem(kind, value)
        if problem:
            raise bad_field(name, f"{name}={json.dumps(value)[:80]}: {problem}")
    return body


def _type_problem(kind: str, value: Any) -> str | None:
    if kind.endswith("?") and value is None:
        return None
    if kind in ("str", "str?"):
        return None if isinstance(value, str) else "use a string"
    if kind == "bool":
        return None if isinstance(value, bool) else "use true or false"
    if kind == "number":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return None if ok else "use a number from 0 to 1"
    if kind == "days?":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if ok and math.isfinite(value) and 0 < value <= MAX_EXPIRY_DAYS:
            return None
        return f"use a positive number of days (at most {MAX_EXPIRY_DAYS}), or null for none"
    if kind == "names":
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return None if ok else "use a list of strings"
    choices = _CHOICES[kind]
    return None if value in choices else f"use one of {', '.join(choices)}"


def with_expiry(body: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """The body with `expires_in_days` turned into the `expires_at` it stands for."""
    if "expires_in_days" not in body:
        return body
    out = dict(body)
    days = out.pop("expires_in_days")
    out["expires_at"] = None if days is None else (now or utcnow()) + timedelta(days=days)
    return out


def validated(data: dict[str, Any]) -> Belief:
    """The belief `data` describes.

    Raises:
        ProxyError: 400 naming the field the model refuses, with its reason.
    """
    try:
        return Belief.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err["loc"] else "body"
        raise bad_field(field, f"{field}: {reason(err)}") from None
