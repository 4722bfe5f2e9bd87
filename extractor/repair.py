"""Reading a model's JSON reply: take valid JSON as it is, repair only what is not.

Small models wrap the object in a fence, chat around it or put raw new lines inside strings.
Valid JSON is never touched: a `content` that itself holds a fenced block stays whole.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

SNIPPET_CHARS = 300

# strict=False: raw control characters (new lines, tabs) inside strings are accepted.
_DECODER = json.JSONDecoder(strict=False)


@dataclass(frozen=True)
class Problem:
    """Why a reply was not usable, and the part of it at fault (for a short re-ask)."""

    message: str
    part: str = ""


def parse_object(raw: str) -> tuple[dict[str, Any] | None, Problem | None]:
    """The JSON object in `raw`, or None and what is wrong with it."""
    text = raw.strip()
    if not text:
        return None, Problem("the reply is empty")
    first_error: json.JSONDecodeError | None = None
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        first_error = exc
    else:
        if isinstance(value, dict):
            return value, None
        return None, Problem(f"the reply is a JSON {type(value).__name__}, not an object")
    start = text.find("{")
    if start < 0:
        return None, Problem("the reply holds no JSON object", _around(text, 0))
    # From the first brace: prose or a fence around the object is left aside, and the object
    # ends where JSON says it ends (a fence inside a string does not cut it).
    try:
        value, _end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        error = exc if start > 0 or first_error is None else first_error
        return None, Problem(f"not valid JSON ({json_error(error)})", _around(error.doc, error.pos))
    if isinstance(value, dict):
        return value, None
    return None, Problem("the reply holds no JSON object")


def json_error(exc: json.JSONDecodeError) -> str:
    """The decoder's message with its place, read once ("starting at line 1 column 9", where
    the decoder's own text ends in "at" already)."""
    return f"{exc.msg.removesuffix(' at')} at line {exc.lineno} column {exc.colno}"


def validate(raw: str, model: type[BaseModel]) -> tuple[BaseModel | None, Problem | None]:
    """The reply parsed and validated as `model`, or None and the problem."""
    data, problem = parse_object(raw)
    if data is None:
        return None, problem
    try:
        return model.model_validate(data), None
    except ValidationError as exc:
        errors = exc.errors()[:5]
        where = [".".join(str(p) for p in err["loc"]) or "reply" for err in errors]
        message = "; ".join(f"{w}: {err['msg']}" for w, err in zip(where, errors, strict=True))
        return None, Problem(
            f"it does not match the schema ({message})", _part(data, errors[0]["loc"])
        )


def _around(text: str, pos: int) -> str:
    half = SNIPPET_CHARS // 2
    start = max(0, pos - half)
    return text[start : start + SNIPPET_CHARS]


def _part(data: Any, loc: tuple[int | str, ...]) -> str:
    # The smallest enclosing value that exists: the invalid item, not the whole reply.
    node: Any = data
    path: list[str] = []
    for key in loc:
        in_dict = isinstance(node, dict) and isinstance(key, str) and key in node
        in_list = isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node)
        if not (in_dict or in_list):
            break
        node = node[key]
        path.append(str(key))
    label = ".".join(path) or "reply"
    if node is data:
        keys = ", ".join(sorted(map(str, data))) if isinstance(data, dict) else ""
        return f"top-level keys: {keys}"[:SNIPPET_CHARS]
    return f"{label} = {json.dumps(node, ensure_ascii=False)}"[:SNIPPET_CHARS]
