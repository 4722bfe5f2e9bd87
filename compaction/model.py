"""What compaction needs from a model: a `ChatModel` and one validated structured call.

Any object with `async complete(messages, *, response_format, model) -> str` will do; the server
passes the extractor's LiteLLM model in, tests a fake with scripted replies.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from compaction.errors import ModelAnswerInvalid

T = TypeVar("T", bound=BaseModel)


class ChatModel(Protocol):
    """Anything that answers chat messages with text."""

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        response_format: Mapping[str, Any] | None,
        model: str,
    ) -> str: ...


async def ask(
    llm: ChatModel,
    messages: Sequence[Mapping[str, Any]],
    response_model: type[T],
    *,
    model: str,
    name: str,
) -> T:
    """The reply validated as `response_model`; one re-ask with the error, else raise.

    Raises:
        ModelAnswerInvalid: both replies failed validation (carries both raw texts).
    """
    fmt = response_format(response_model, name)
    first = await llm.complete(list(messages), response_format=fmt, model=model)
    value, error = parse_reply(first, response_model)
    if value is not None:
        return value
    retry = [
        *messages,
        {"role": "assistant", "content": first},
        {
            "role": "user",
            "content": f"That reply was not valid: {error}\nReply again with only the JSON "
            "object that matches the schema.",
        },
    ]
    second = await llm.complete(retry, response_format=fmt, model=model)
    value, error = parse_reply(second, response_model)
    if value is not None:
        return value
    raise ModelAnswerInvalid(
        f"model {model} returned invalid output twice: {error}",
        raw_output=f"{first}\n\n----- re-ask -----\n\n{second}",
    )


def parse_reply(raw: str, response_model: type[T]) -> tuple[T | None, str]:
    """The validated value, or None and a short error the model can act on."""
    text = _unwrap(raw)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    try:
        return response_model.model_validate(data), ""
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'reply'}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        return None, f"does not match the schema ({problems})"


_FENCED = re.compile(r"```(?:json|JSON)?\s*\n?([\s\S]*?)\n?```")


def _unwrap(raw: str) -> str:
    # Small models wrap JSON in fences or chat around it; take the object itself.
    text = raw.strip()
    fenced = _FENCED.search(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text.startswith("{"):
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            text = text[start : end + 1]
    return text


def response_format(model: type[BaseModel], name: str) -> dict[str, Any]:
    """The OpenAI `response_format` for `model`, in the strict form (every key required)."""
    schema = _strict(copy.deepcopy(model.model_json_schema()))
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


def _strict(node: Any) -> Any:
    if isinstance(node, dict):
        for key in ("default", "title", "minLength", "maxLength", "minItems", "maxItems"):
            node.pop(key, None)
        for value in node.values():
            _strict(value)
        if node.get("type") == "object" and isinstance(node.get("properties"), dict):
            node["required"] = list(node["properties"])
            node["additionalProperties"] = False
    elif isinstance(node, list):
        for value in node:
            _strict(value)
    return node
