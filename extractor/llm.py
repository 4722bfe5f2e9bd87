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
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from extractor.errors import ExtractionOutputInvalid, ModelRefused
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
        """Raises:
        ModelRefused: the server refused the request's form (status and its words kept).
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
        try:
            response = await litellm.acompletion(
                model=call.model,
                messages=call.messages,
                api_base=api_base,
                api_key=api_key,  # None: LiteLLM reads the provider's usual variable
                timeout=self.timeout,
                num_retries=0,  # retries are the job queue's business, with backoff and a breaker
                # a parameter the model does not take (temperature 0 on a model that takes only 1)
                # is left out rather than failing every job
                drop_params=True,
                **kwargs,
            )
        except Exception as exc:
            raise _classify(exc) from exc
        return _reply(response)

    async def aclose(self) -> None:
        """Stop LiteLLM's background logging task, which is bound to this event loop."""
        if not self._used:
            return
        worker = importlib.import_module("litellm.litellm_core_utils.logging_worker")
        # It may still hold tasks of an earlier, closed loop (tests run several); those are
        # gone already and cannot be awaited from here.
        with contextlib.suppress(RuntimeError):
            await worker.GLOBAL_LOGGING_WORKER.stop(discard_pending=True, timeout=2)


def _reply(response: Any) -> ModelReply:
    choices = getattr(response, "choices", None) or []
    if not choices:
        raise ExtractionOutputInvalid(
            "the model answered without any choice", raw_output=str(response)[:4000]
        )
    choice = choices[0]
    message = choice.message
    content = message.content if isinstance(message.content, str) else ""
    arguments = None
    for tool_call in getattr(message, "tool_calls", None) or []:
        function = getattr(tool_call, "function", None)
        if function is not None and isinstance(function.arguments, str):
            arguments = function.arguments
            break
    usage = getattr(response, "usage", None)
    return ModelReply(
        text=content,
        finish_reason=getattr(choice, "finish_reason", None),
        tool_arguments=arguments,
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        # OpenAI's field; LiteLLM maps Anthropic's cache reads into it too.
        cached_tokens=getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None),
    )


def _classify(exc: Exception) -> Exception:
    """Our error for what LiteLLM raised: unusable output, a refusal, or itself (an outage)."""
    chain: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and link not in chain:
        chain.append(link)
        link = link.__cause__ or link.__context__
    for link in chain:
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
    if isinstance(status, int) and status in REFUSAL_STATUSES:
        body = getattr(exc, "body", None)
        detail = json.dumps(body, ensure_ascii=False) if body is not None else ""
        return ModelRefused(
            f"the model server refused the request ({status}): {detail or text}"[:1000],
            status_code=status,
            detail=f"{detail} {text}",
        )
    return exc
