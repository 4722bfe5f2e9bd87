"""The LLM boundary: a `ChatModel` protocol and its LiteLLM implementation.

This is the only module that imports LiteLLM. The import costs seconds of CPU, so it never runs
on the event loop: `warm_up()` starts it in a thread at start-up, and a call that comes before it
finishes waits for that thread without blocking the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from extractor.errors import (
    ExtractionOutputInvalid,
    ExtractorError,
    ModelRefused,
    ModelSilent,
    ModelUnauthorized,
    ModelUnreachable,
)
from extractor.modes import ModeBook
from extractor.repair import json_error

# Status codes with which servers refuse the form of a request (rather than fail serving it):
# llama-cpp-python answers 500 for a `response_format` it does not know.
REFUSAL_STATUSES = frozenset({400, 404, 415, 422, 500, 501})


@dataclass(frozen=True)
class ModelCall:
    """One chat completion request, in OpenAI terms."""

    model: str
    messages: list[dict[str, Any]]
    response_format: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: dict[str, Any] | None = None
    max_tokens: int | None = None
    temperature: float | None = None


@dataclass(frozen=True)
class ModelReply:
    """What came back: the text (or the forced tool call's arguments), why it stopped, usage."""

    text: str
    finish_reason: str | None = None
    tool_arguments: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None  # of prompt_tokens, read from the provider's prompt cache

    @property
    def output(self) -> str:
        """The structured payload: the tool call's arguments when there is one, else the text."""
        return self.tool_arguments if self.tool_arguments is not None else self.text


class ChatModel(Protocol):
    """Anything that answers a `ModelCall`; tests pass a fake with scripted replies.

    `modes` holds what each model is known to refuse, shared by every caller of this client.
    """

    @property
    def modes(self) -> ModeBook: ...

    async def complete(self, call: ModelCall) -> ModelReply: ...


class LiteLLMImport:
    """LiteLLM, imported once in a background thread; awaiting it never blocks the loop."""

    def __init__(self) -> None:
        self._module: ModuleType | None = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._started = False

    def start(self) -> None:
        """Begin the import in a daemon thread (idempotent)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._run, name="tenure-litellm-import", daemon=True).start()

    def _run(self) -> None:
        # LiteLLM fetches its price list and Anthropic's beta-header table from the internet
        # unless told to use the copies it ships; nothing of ours may reach the network but the
        # providers (an explicit choice in the environment is kept).
        for flag in ("LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS"):
            os.environ.setdefault(flag, "True")
        try:
            module = importlib.import_module("litellm")
            module.suppress_debug_info = True  # type: ignore[attr-defined]  # it prints "Give Feedback" banners to stdout
            logging.getLogger("LiteLLM").addFilter(_no_stream_chunks)
            self._module = module
        except BaseException as exc:  # reported to every caller, not lost in the thread
            self._error = exc
        finally:
            self._done.set()

    @property
    def ready(self) -> bool:
        return self._module is not None

    async def get(self) -> ModuleType:
        if self._module is not None:
            return self._module
        self.start()
        await asyncio.to_thread(self._done.wait)
        if self._module is None:
            raise RuntimeError(f"LiteLLM could not be imported: {self._error}")
        return self._module


def _no_stream_chunks(record: logging.LogRecord) -> bool:
    """Drop LiteLLM's debug lines about each streamed chunk: one line per token floods a debug
    log, and they carry the model's reply piece by piece, past any redaction."""
    return not (
        record.levelno <= logging.DEBUG and record.pathname.endswith("streaming_handler.py")
    )


# Python's import is process-wide, and so is this: one import thread, whoever asks first.
LITELLM = LiteLLMImport()


async def litellm_module() -> ModuleType:
    """LiteLLM for any caller (the gateway's translation of routed models too), imported off
    the event loop."""
    return await LITELLM.get()


class LiteLLMChatModel:
    """The real model, through LiteLLM; built once at start-up and shared by every caller."""

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
        self.library = LITELLM
        self._modes = ModeBook()
        self._used = False

    @property
    def modes(self) -> ModeBook:
        return self._modes

    def warm_up(self) -> None:
        """Start importing LiteLLM in a thread now, so the first call does not pay for it."""
        self.library.start()

    def route(self, model: str) -> tuple[str | None, str | None]:
        """The (api_base, api_key) a model is called at."""
        provider = model.split("/", 1)[0] + "/"
        api_base, api_key = self.routes.get(
            model, self.routes.get(provider, (self.api_base, self.api_key))
        )
        if api_base and not api_key:
            api_key = "no-key"  # local OpenAI-compatible servers need none; the client insists
        return api_base, api_key

    async def complete(self, call: ModelCall) -> ModelReply:
        """Stream the reply; only silence longer than `timeout` ends it early.

        Raises:
        ModelRefused: the server refused the request's form (status and its words kept).
        ModelUnreachable: nothing listens at the model's URL.
        ModelSilent: the server sent nothing for `timeout` seconds (what arrived is kept).
        ExtractionOutputInvalid: a success status whose body is no chat completion.
        """
        litellm = await self.library.get()
        self._used = True
        api_base, api_key = self.route(call.model)
        kwargs: dict[str, Any] = {}
        for name in ("response_format", "tools", "tool_choice", "max_tokens", "temperature"):
            value = getattr(call, name)
            if value is not None:
                kwargs[name] = value
        gathered = _Gathered()
        stream: Any = None
        try:
            stream = await asyncio.wait_for(
                litellm.acompletion(
                    model=call.model,
                    messages=call.messages,
                    api_base=api_base,
                    api_key=api_key,  # None: LiteLLM reads the provider's usual variable
                    # the HTTP client's own limit stays behind ours, so silence is ours to name
                    timeout=self.timeout * 2,
                    num_retries=0,  # retries are the job queue's business, with a breaker
                    # a parameter the model does not take (temperature 0 on a model that takes
                    # only 1) is left out rather than failing every job
                    drop_params=True,
                    stream=True,
                    stream_options={"include_usage": True},
                    **kwargs,
                ),
                self.timeout,
            )
            whole = await asyncio.wait_for(_whole_body(stream), self.timeout)
            if whole is not None:  # the server answered without streaming
                return _from_body(whole)
            chunks = aiter(stream)
            while True:
                try:
                    chunk = await asyncio.wait_for(anext(chunks), self.timeout)
                except StopAsyncIteration:
                    break
                gathered.add(chunk)
        except TimeoutError:
            message = _silence(call.model, self.timeout, gathered)
            self._modes.note_silent(call.model, message)
            raise ModelSilent(message, raw_output=gathered.output) from None
        except ExtractorError:
            raise
        except Exception as exc:
            raise _classify(exc, api_base) from exc
        finally:
            if stream is not None:
                # Closing the connection tells the server to stop generating for a reply no
                # one will read; otherwise the next call queues behind it.
                await stream.aclose()
        return gathered.reply()

    async def aclose(self) -> None:
        """Stop LiteLLM's background logging task, which is bound to this event loop."""
        if not self._used:
            return
        worker = importlib.import_module("litellm.litellm_core_utils.logging_worker")
        # It may still hold tasks of an earlier, closed loop (tests run several); those are
        # gone already and cannot be awaited from here.
        with contextlib.suppress(RuntimeError):
            await worker.GLOBAL_LOGGING_WORKER.stop(discard_pending=True, timeout=2)


class _Gathered:
    """A streamed reply as its chunks arrive: text, the first tool call's arguments, usage."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.arguments: list[str] | None = None
        self.finish_reason: str | None = None
        self.prompt_tokens: int | None = None
        self.completion_tokens: int | None = None
        self.cached_tokens: int | None = None
        self.chunks = 0

    def add(self, chunk: Any) -> None:
        self.chunks += 1
        usage: Any = getattr(chunk, "usage", None)
        if getattr(usage, "prompt_tokens", None):
            self.prompt_tokens = usage.prompt_tokens
            self.completion_tokens = usage.completion_tokens
            # OpenAI's field; LiteLLM maps Anthropic's cache reads into it too.
            details: Any = getattr(usage, "prompt_tokens_details", None)
            self.cached_tokens = getattr(details, "cached_tokens", None)
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0):
                continue
            self.finish_reason = getattr(choice, "finish_reason", None) or self.finish_reason
            delta: Any = getattr(choice, "delta", None)
            if isinstance(getattr(delta, "content", None), str):
                self.text.append(delta.content)
            for tool_call in getattr(delta, "tool_calls", None) or []:
                if getattr(tool_call, "index", 0):
                    continue  # only the first (forced) call is ours
                function = getattr(tool_call, "function", None)
                part = getattr(function, "arguments", None)
                self.arguments = self.arguments or []
                if isinstance(part, str):
                    self.arguments.append(part)

    @property
    def output(self) -> str:
        return "".join(self.arguments if self.arguments is not None else self.text)

    def reply(self) -> ModelReply:
        if not self.chunks:
            raise ExtractionOutputInvalid(
                "the model's reply is not a chat completion (no event in its stream)",
                raw_output="",
            )
        return ModelReply(
            text="".join(self.text),
            finish_reason=self.finish_reason,
            tool_arguments="".join(self.arguments) if self.arguments is not None else None,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cached_tokens=self.cached_tokens,
        )


async def _whole_body(stream: Any) -> str | None:
    """The body of a reply that is not an event stream (a server that ignores `stream`, or
    no chat server at all), read before LiteLLM's stream decoder skips it; else None."""
    response = getattr(getattr(stream, "completion_stream", None), "response", None)
    headers = getattr(response, "headers", None)
    if response is None or headers is None:
        return None
    if "text/event-stream" in str(headers.get("content-type", "")):
        return None
    body: bytes = await response.aread()
    return body.decode("utf-8", errors="replace")


def _from_body(text: str) -> ModelReply:
    """A whole (unstreamed) chat completion, or the error saying why it is none."""
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ExtractionOutputInvalid(
            f"the model's reply is not a chat completion ({json_error(exc)})",
            raw_output=text[:4000],
        ) from None
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not choices or not isinstance(choices[0], dict):
        raise ExtractionOutputInvalid(
            "the model's reply is a JSON document but not a chat completion",
            raw_output=text[:4000],
        )
    message = choices[0].get("message") or {}
    arguments = None
    for tool_call in message.get("tool_calls") or []:
        function = tool_call.get("function") or {}
        if isinstance(function.get("arguments"), str):
            arguments = function["arguments"]
            break
    usage = payload.get("usage") or {}
    content = message.get("content")
    return ModelReply(
        text=content if isinstance(content, str) else "",
        finish_reason=choices[0].get("finish_reason"),
        tool_arguments=arguments,
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        cached_tokens=(usage.get("prompt_tokens_details") or {}).get("cached_tokens"),
    )


def _silence(model: str, limit: float, gathered: _Gathered) -> str:
    if not gathered.output:
        return (
            f"model {model} sent nothing for {limit:g} s; a model that is slow to read the "
            "prompt needs a longer TENURE_EXTRACT_TIMEOUT (the longest silence allowed)"
        )
    return (
        f"model {model} went silent for {limit:g} s after {len(gathered.output)} characters of "
        "its reply (kept); a model that slow needs a longer TENURE_EXTRACT_TIMEOUT (the "
        "longest silence allowed between two tokens)"
    )


def _classify(exc: Exception, api_base: str | None = None) -> Exception:
    """Our error for what LiteLLM raised: unusable output, a refusal, no server, or itself (an
    outage)."""
    chain: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and link not in chain:
        chain.append(link)
        link = link.__cause__ or link.__context__
    for link in chain:
        # LiteLLM reports a refused connection as a 500, as if the server had answered.
        if isinstance(link, ConnectionRefusedError) or type(link).__name__ == "ConnectError":
            where = api_base or "the provider's default URL"
            return ModelUnreachable(
                f"nothing answers at {where} ({link}); start the model's server, or point "
                "TENURE_EXTRACT_API_BASE (or the model's route) at where it listens"
            )
        # A success status with a body that is not JSON: LiteLLM reports it as a 500.
        if isinstance(link, json.JSONDecodeError):
            return ExtractionOutputInvalid(
                f"the model's reply is not a chat completion ({json_error(link)})",
                raw_output=link.doc[:4000],
            )
    text = str(exc)
    if "response with no 'choices'" in text:
        return ExtractionOutputInvalid(
            "the model's reply is a JSON document but not a chat completion", raw_output=text
        )
    status = getattr(exc, "status_code", None)
    unauthorized = _unauthorized(exc, status)
    if unauthorized is not None:
        return unauthorized
    if isinstance(status, int) and status in REFUSAL_STATUSES:
        body = getattr(exc, "body", None)
        detail = json.dumps(body, ensure_ascii=False) if body is not None else ""
        return ModelRefused(
            f"the model server refused the request ({status}): {detail or text}"[:1000],
            status_code=status,
            detail=f"{detail} {text}",
        )
    return exc


def _unauthorized(exc: Exception, status: object) -> ModelUnauthorized | None:
    """A rejected key is a setting to fix, not an outage: named at once, never retried."""
    if status not in (401, 403):
        return None
    return ModelUnauthorized(
        f"the model server rejected the extraction call's key ({status}: {str(exc)[:300]}); "
        "extraction never sends a client's key: set TENURE_EXTRACT_API_KEY, or "
        "TENURE_UPSTREAM_API_KEY when extraction uses the upstream, to a key it accepts, "
        "restart, then retry the failed jobs"
    )
