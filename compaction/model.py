"""What compaction needs from a model: the extractor's LLM boundary, one validated call.

The model is the extractor's `ChatModel` (the gateway passes its one shared client, tests a fake
with scripted replies). Output-mode negotiation, repair and the single re-ask are the
extractor's `complete_structured`, so what one learns about a model the other knows too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from compaction.errors import ModelAnswerInvalid
from extractor.errors import ExtractionOutputInvalid
from extractor.llm import ChatModel
from extractor.structured import CallOptions, complete_structured

__all__ = ["ChatModel", "ask"]

T = TypeVar("T", bound=BaseModel)

# Merge reviews and the persona are longer than one turn's extraction.
COMPACTION_CALL = CallOptions(max_tokens=2048)


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
            llm, messages, response_model, model=model, schema_name=name, options=COMPACTION_CALL
        )
    except ExtractionOutputInvalid as exc:
        raise ModelAnswerInvalid(exc.message, raw_output=exc.raw_output) from None
    return reply.value
