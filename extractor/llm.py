"""The LLM boundary: a `ChatModel` protocol, its LiteLLM implementation and the structured call."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from extractor.errors import ExtractionOutputInvalid
from extractor.schema import response_format

T = TypeVar("T", bound=BaseModel)

RE_ASK_SEPARATOR = "\n\n----- re-ask -----\n\n"


class ChatModel(Protocol):
    """Anything that answers chat messages with text; tests pass a fake with scripted replies."""

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        response_format: Mapping[str, Any] | None,
        model: str,
    ) -> str: ...


class LiteLLMChatModel:
    """The real model, through LiteLLM; the only place that imports it (lazily: it is heavy)."""

    def __init__(
        self,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        routes: Mapping[str, tuple[str | None, str | None]] | None = None,
    ) -> None:
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        # model string, or provider prefix like "anthropic/" -> (api_base, api_key) of its own
        self.routes = dict(routes or {})
        self._used = False

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        response_format: Mapping[str, Any] | None,
        model: str,
    ) -> str:
        import litellm  # lazy: importing LiteLLM costs seconds and ~200 MB

        self._used = True
        kwargs: dict[str, Any] = {}
        if response_format is not None:
            kwargs["response_format"] = dict(response_format)
        provider = model.split("/", 1)[0] + "/"
        api_base, api_key = self.routes.get(
            model, self.routes.get(provider, (self.api_base, self.api_key))
        )
        if api_base and not api_key:
            api_key = "no-key"  # local OpenAI-compatible servers need none; the client insists
        response = await litellm.acompletion(
            model=model,
            messages=[dict(m) for m in messages],
            api_base=api_base,
            api_key=api_key,  # None: LiteLLM reads the provider's usual variable
            timeout=self.timeout,
            num_retries=0,  # retries are the job queue's business, with backoff and a breaker
            **kwargs,
        )
        content = response.choices[0].message.content
        return content if isinstance(content, str) else ""

    async def aclose(self) -> None:
        """Stop LiteLLM's background logging task, which is bound to this event loop."""
        if not self._used:
            return
        from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

        # It may still hold tasks of an earlier, closed loop (tests run several); those are
        # gone already and cannot be awaited from here.
        with contextlib.suppress(RuntimeError):
            await GLOBAL_LOGGING_WORKER.stop(discard_pending=True, timeout=2)


@dataclass(frozen=True)
class Structured(Generic[T]):
    """A validated reply and the raw text(s) it came from."""

    value: T
    raw_output: str


async def complete_structured(
    llm: ChatModel,
    messages: Sequence[Mapping[str, Any]],
    response_model: type[T],
    *,
    model: str,
    schema_name: str = "extraction",
) -> Structured[T]:
    """Ask for `response_model` as JSON; repair trivia, re-ask once with the error, else raise.

    Raises:
        ExtractionOutputInvalid: both replies failed validation; carries the raw text of both.
    """
    fmt = response_format(response_model, schema_name)
    first = await llm.complete(list(messages), response_format=fmt, model=model)
    value, error = parse_reply(first, response_model)
    if value is not None:
        return Structured(value, first)
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
        return Structured(value, second)
    raise ExtractionOutputInvalid(
        f"model {model} returned invalid output twice: {error}",
        raw_output=first + RE_ASK_SEPARATOR + second,
    )


def parse_reply(raw: str, response_model: type[T]) -> tuple[T | None, str]:
    """The validated value or None and a short error for the model to correct."""
    text = _repair(raw)
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


def _repair(raw: str) -> str:
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
