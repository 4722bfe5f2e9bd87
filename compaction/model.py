"""What compaction needs from a model: the extractor's LLM boundary, one validated call.

Any object with `async complete(messages, *, response_format, model) -> str` will do (the
extractor's `ChatModel`); the server passes its LiteLLM model in, tests a fake with scripted
replies. Validation, repair and the single re-ask are the extractor's `complete_structured`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from compaction.errors import ModelAnswerInvalid
from extractor.errors import ExtractionOutputInvalid
from extractor.llm import ChatModel, complete_structured

__all__ = ["ChatModel", "ask"]

T = TypeVar("T", bound=BaseModel)


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
    try:
        reply = await complete_structured(
            llm, messages, response_model, model=model, schema_name=name
        )
    except ExtractionOutputInvalid as exc:
        raise ModelAnswerInvalid(exc.message, raw_output=exc.raw_output) from None
    return reply.value
