"""One validated structured reply from any model: mode negotiation, truncation, repair, re-ask.

The order of business for a call:
1. the output mode: the first the model has not refused (`json_schema`, `json_object` with the
   schema in the prompt, a forced tool call, plain JSON in text); a refusal is remembered in
   the client's `ModeBook` and the next mode is tried at once;
2. the rules: in the system message, or in the user turn when the model's chat template drops
   system messages (a setting, or detected from the prompt's token count; the reply that was
   written without the rules is dropped and the model asked again, with them);
3. the reply: cut off at the token budget -> once more with twice the budget (and the light
   schema), then `ExtractionTruncated`; invalid -> one re-ask naming the error and only the
   invalid part, then `ExtractionOutputInvalid`. Both carry every raw reply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel

from extractor.errors import (
    ContextWindowTooSmall,
    ExtractionOutputInvalid,
    ExtractionTruncated,
    ModelRefused,
    ModelSilent,
    OutputModeUnavailable,
)
from extractor.llm import ChatModel, ModelCall, ModelReply
from extractor.modes import ModeBook, ModeSetting, OutputMode, RulesPlacement
from extractor.prompt_cache import cache_marked
from extractor.repair import Problem, validate
from extractor.schema import SchemaVariant, outline, response_format, wire_schema

T = TypeVar("T", bound=BaseModel)

RE_ASK_SEPARATOR = "\n\n----- next reply -----\n\n"
RULES_OPEN, RULES_CLOSE = "<instructions>", "</instructions>"
MAX_CALLS = 8  # modes x (truncation retry + re-ask); a bound, never reached in practice

# Words with which servers refuse a mode; matched against the error status's body and text.
_REFUSAL_WORDS: dict[OutputMode, re.Pattern[str]] = {
    "json_schema": re.compile(
        r"response_format|json_schema|json_object|'text'|schema|grammar|structured", re.I
    ),
    "json_object": re.compile(r"response_format|json_object|'text'|grammar", re.I),
    "tools": re.compile(r"tool|function", re.I),
    "text": re.compile(r"(?!)"),  # nothing to refuse: a plain request
}
# Words with which servers say the prompt and the budget do not fit their context window.
_CONTEXT_WORDS = re.compile(
    r"context (window|length)|exceed\w* (the )?context|n_ctx|num_ctx|prompt is too long", re.I
)
# Words that blame the schema's limits rather than the mode itself.
_LIMIT_WORDS = re.compile(
    r"maxLength|minLength|maxItems|minItems|not permitted|unsupported keyword|rules that are "
    r"going to be repeated|exceeds sane",
    re.I,
)


@dataclass(frozen=True)
class CallOptions:
    """How to ask: budget, temperature, the output mode setting, schema and rules placement."""

    max_tokens: int = 1024
    max_tokens_retry: int = 4096  # the budget of the one retry after a truncated reply
    temperature: float = 0.0
    output_mode: ModeSetting = "auto"
    schema: SchemaVariant = "full"
    rules: RulesPlacement = "auto"


@dataclass(frozen=True)
class Structured(Generic[T]):
    """A validated reply, the raw text(s) it came from and what the calls cost."""

    value: T
    raw_output: str
    mode: OutputMode
    calls: int = 1
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0


@dataclass
class _Attempt:
    """The state of one structured call as it goes through retries."""

    modes: list[OutputMode]
    max_tokens: int
    schema: SchemaVariant
    rules_in_user: bool
    problem: Problem | None = None  # set once: the re-ask names it
    truncated: bool = False
    raws: list[str] = field(default_factory=list)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    @property
    def raw_output(self) -> str:
        return RE_ASK_SEPARATOR.join(self.raws)

    def count(self, reply: ModelReply) -> None:
        self.calls += 1
        self.prompt_tokens += reply.prompt_tokens or 0
        self.completion_tokens += reply.completion_tokens or 0
        self.cached_tokens += reply.cached_tokens or 0


async def complete_structured(
    llm: ChatModel,
    messages: Sequence[Mapping[str, Any]],
    response_model: type[T],
    *,
    model: str,
    schema_name: str = "extraction",
    options: CallOptions | None = None,
) -> Structured[T]:
    """Ask for `response_model` as JSON, in the best mode the model takes; never mutates
    `messages`.

    Raises:
        OutputModeUnavailable: the model refused every output mode the settings allow.
        ContextWindowTooSmall: the server's context cannot hold the prompt and the budget.
        ExtractionTruncated: the reply was cut off twice, the second time with a larger budget.
        ExtractionOutputInvalid: two replies failed validation (both raw texts kept).
        ModelRefused, or the client's own errors: the call failed (an outage: retried later).
    """
    options = options or CallOptions()
    book = llm.modes
    attempt = _Attempt(
        modes=book.modes_for(model, options.output_mode),
        max_tokens=options.max_tokens,
        schema=options.schema,
        rules_in_user=options.rules == "user"
        or (options.rules == "auto" and book.system_dropped(model)),
    )
    while attempt.calls < MAX_CALLS:
        if not attempt.modes:
            raise OutputModeUnavailable(_unavailable(llm, model, options.output_mode))
        mode = attempt.modes[0]
        call = _call(messages, response_model, model, schema_name, mode, attempt, llm)
        try:
            reply = await llm.complete(call)
        except ModelSilent as exc:
            exc.raw_output = RE_ASK_SEPARATOR.join([*attempt.raws, exc.raw_output])
            raise
        except ModelRefused as exc:
            if not _next_after_refusal(book, model, mode, exc, attempt):
                raise
            continue
        attempt.count(reply)
        attempt.raws.append(reply.output)
        value, problem = validate(reply.output, response_model)
        if (
            options.rules == "auto"
            and not attempt.rules_in_user
            and _system_dropped(call.messages, reply.prompt_tokens)
        ):
            book.note_system_dropped(
                model, f"{reply.prompt_tokens} prompt tokens for {_chars(call.messages)} chars"
            )
            attempt.rules_in_user = True
            # The rules never reached the model: whatever it said was said blind (a valid
            # reply is likely the prompt's worked example). Ask again, with them, and keep only
            # that answer.
            attempt.raws.pop()
            continue
        if value is not None:
            book.note_used(model, mode)
            return Structured(
                value=cast(T, value),
                raw_output=attempt.raw_output,
                mode=mode,
                calls=attempt.calls,
                prompt_tokens=attempt.prompt_tokens,
                completion_tokens=attempt.completion_tokens,
                cached_tokens=attempt.cached_tokens,
            )
        _next_after_invalid(model, reply, problem, attempt, options)
    raise ExtractionOutputInvalid(
        f"model {model} gave no usable reply in {MAX_CALLS} calls", raw_output=attempt.raw_output
    )


def _next_after_refusal(
    book: ModeBook, model: str, mode: OutputMode, exc: ModelRefused, attempt: _Attempt
) -> bool:
    """After a refused call, set up the next (True), or False when the refusal is not about
    the output mode (the caller raises it).

    Raises:
        ContextWindowTooSmall: the prompt and the budget do not fit the server's context.
    """
    if _CONTEXT_WORDS.search(exc.detail):
        raise ContextWindowTooSmall(
            f"model {model}: the server's context window cannot hold the extraction "
            f"prompt and {attempt.max_tokens} reply tokens ({exc.message}); give the "
            "server a context of 8192 tokens (llama.cpp -c / n_ctx, Ollama num_ctx)"
        ) from None
    if not _refuses(mode, exc):
        return False
    if mode == "json_schema" and _LIMIT_WORDS.search(exc.detail) and not book.bare_schema(model):
        book.use_bare_schema(model, exc.message)
        return True
    book.refuse(model, mode, exc.message)
    attempt.modes.pop(0)
    return True


def _next_after_invalid(
    model: str,
    reply: ModelReply,
    problem: Problem | None,
    attempt: _Attempt,
    options: CallOptions,
) -> None:
    """After a reply that did not validate, set up the next call: a larger budget (and the
    light schema) for a cut-off reply, a re-ask naming the problem for an invalid one.

    Raises:
        ExtractionTruncated: cut off a second time.
        ExtractionOutputInvalid: invalid a second time.
    """
    if reply.finish_reason == "length":
        if attempt.truncated:
            raise ExtractionTruncated(
                f"model {model} stopped at its token budget twice ({attempt.max_tokens} "
                "tokens the second time); raise TENURE_EXTRACT_MAX_TOKENS or set "
                "TENURE_EXTRACT_SCHEMA=light",
                raw_output=attempt.raw_output,
            )
        attempt.truncated = True
        attempt.max_tokens = max(options.max_tokens_retry, attempt.max_tokens * 2)
        attempt.schema = "light"
        return
    if attempt.problem is not None:
        assert problem is not None
        raise ExtractionOutputInvalid(
            f"model {model} returned invalid output twice: {problem.message}",
            raw_output=attempt.raw_output,
        )
    attempt.problem = problem


def _call(
    messages: Sequence[Mapping[str, Any]],
    response_model: type[BaseModel],
    model: str,
    name: str,
    mode: OutputMode,
    attempt: _Attempt,
    llm: ChatModel,
) -> ModelCall:
    bounded = not llm.modes.bare_schema(model)
    schema = wire_schema(response_model, variant=attempt.schema, bounded=bounded)
    out = [dict(m) for m in messages]
    if mode in ("json_object", "text"):
        out = _with_schema(out, schema)
    if attempt.rules_in_user:
        out = _rules_in_user(out)
    if attempt.problem is not None:
        out.append({"role": "user", "content": _re_ask(attempt.problem)})
    out = cache_marked(out, model)
    call = ModelCall(model=model, messages=out, max_tokens=attempt.max_tokens, temperature=0.0)
    if mode == "json_schema":
        fmt = response_format(response_model, name, variant=attempt.schema, bounded=bounded)
        return replace(call, response_format=fmt)
    if mode == "json_object":
        return replace(call, response_format={"type": "json_object"})
    if mode == "tools":
        tool = {
            "type": "function",
            "function": {
                "name": name,
                "description": f"Record the {name} result.",
                "parameters": schema,
            },
        }
        choice = {"type": "function", "function": {"name": name}}
        return replace(call, tools=[tool], tool_choice=choice)
    return call


def _with_schema(messages: list[dict[str, Any]], schema: dict[str, Any]) -> list[dict[str, Any]]:
    # An outline, not the JSON schema: a third of its tokens on every call of these modes.
    text = "\n\nThe reply is one JSON object with every key below:\n" + outline(schema)
    for i, message in enumerate(messages):
        if message.get("role") == "system" and isinstance(message.get("content"), str):
            messages[i] = {**message, "content": message["content"] + text}
            return messages
    return [{"role": "system", "content": text.strip()}, *messages]


def _rules_in_user(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fold the system messages into the first user message (for templates that drop them)."""
    rules = "\n\n".join(
        str(m.get("content", "")) for m in messages if m.get("role") == "system"
    ).strip()
    rest = [m for m in messages if m.get("role") != "system"]
    if not rules:
        return rest
    for i, message in enumerate(rest):
        if message.get("role") == "user":
            content = f"{RULES_OPEN}\n{rules}\n{RULES_CLOSE}\n\n{message.get('content', '')}"
            rest[i] = {**message, "content": content}
            return rest
    return [{"role": "user", "content": f"{RULES_OPEN}\n{rules}\n{RULES_CLOSE}"}, *rest]


def _re_ask(problem: Problem) -> str:
    part = f"\nThe part at fault: {problem.part}" if problem.part else ""
    return (
        f"Your reply could not be used: {problem.message}.{part}\n"
        "Reply again with only the complete JSON object, following the rules above."
    )


def _refuses(mode: OutputMode, exc: ModelRefused) -> bool:
    return bool(_REFUSAL_WORDS[mode].search(exc.detail))


def _chars(messages: Sequence[Mapping[str, Any]]) -> int:
    return sum(len(str(m.get("content") or "")) for m in messages)


def _system_dropped(messages: Sequence[Mapping[str, Any]], prompt_tokens: int | None) -> bool:
    """True when the prompt was too short to have held the system messages.

    Tokenizers spend fewer than 6 characters per token on prose, so a prompt of fewer tokens
    than a sixth of its characters cannot have held all of them; but it must have held the
    rest (a count below a sixth of that is no real count, and proves nothing).
    """
    system = sum(len(str(m.get("content") or "")) for m in messages if m.get("role") == "system")
    if prompt_tokens is None or system < 400:
        return False
    rest = _chars(messages) - system
    return rest <= prompt_tokens * 6 < rest + system


def _unavailable(llm: ChatModel, model: str, setting: ModeSetting) -> str:
    refused = llm.modes.snapshot().get(model, {}).get("refused_modes", {})
    detail = "; ".join(f"{mode}: {why}" for mode, why in refused.items()) or "no detail"
    if setting != "auto":
        return (
            f"model {model} refuses output mode {setting} ({detail}); set "
            "TENURE_EXTRACT_OUTPUT_MODE=auto to let Tenure find one it accepts"
        )
    return (
        f"model {model} refuses every structured-output mode ({detail}); check that its "
        "server speaks the OpenAI chat completions protocol"
    )
