"""A stand-in LLM provider: a real HTTP server speaking the OpenAI and Anthropic protocols.

Runs aiohttp.web on 127.0.0.1 (free port) in a background thread. It records every request it
receives (method, path, headers, body) and the exact bytes it sent back, and answers:

- `POST /v1/chat/completions`: JSON, or SSE in several chunks (tool-call deltas, a usage chunk
  when `stream_options.include_usage`, `[DONE]`);
- `POST /v1/messages`: Anthropic JSON, or SSE events (`message_start` … `ping` …
  `message_stop`);
- `POST /v1/responses`: a `response` object, or its named SSE events (see `responses.py`);
- `GET /v1/models`, `POST /v1/embeddings`, and any other path with a small JSON echo.

Replies are scripted with `queue()`: a `Chat` (content and/or tool calls, rendered for the
wire format and streaming mode of the request it answers — e.g. the JSON an extractor asks for
with `response_format`), or a raw `Raw` reply (any status, headers and body; e.g. 429 with
`retry-after`). Either may be slow (`delay`), and the server notes when a client hangs up on it.
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.fakes.wire import (
    CREATED,
    anthropic_events,
    anthropic_message,
    openai_completion,
    openai_events,
)

DEFAULT_TEXT = "Hello from the stand-in provider."


@dataclass
class Chat:
    """An assistant reply, rendered as OpenAI or Anthropic, JSON or SSE, to fit the request."""

    content: str = DEFAULT_TEXT
    tool_calls: list[dict[str, Any]] = field(
        default_factory=list
    )  # {"id", "name", "arguments" or "input"}
    delay: float = 0.0  # seconds before the response head
    chunk_delay: float = 0.0  # seconds between SSE events
    match: Callable[[Recorded], bool] | None = None  # only for requests it accepts
    usage: dict[str, Any] = field(default_factory=dict)  # Anthropic usage fields (cache reads)


@dataclass
class Raw:
    status: int = 200
    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    delay: float = 0.0
    match: Callable[[Recorded], bool] | None = None


Reply = Chat | Raw


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    sent: bytearray = field(default_factory=bytearray)
    client_hung_up: bool = False

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


TLS_DIR = Path(__file__).resolve().parent / "tls"  # a self-signed cert for 127.0.0.1


def tls_context() -> ssl.SSLContext:
    """The server side of https on 127.0.0.1 (clients trust `TLS_DIR / "cert.pem"`)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(TLS_DIR / "cert.pem", TLS_DIR / "key.pem")
    return context


class FakeUpstream:
    """Start with `with FakeUpstream() as upstream:`; `upstream.url` ends in `/v1`."""

    answers_canary = True  # see `canary_reply`
    default_text = DEFAULT_TEXT  # the answer when nothing is queued

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        """`tls`: serve https with this context (e.g. `tls_context()`'s self-signed cert)."""
        self.tls = tls
        self.requests: list[Recorded] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self.hung_up = threading.Event()
        self.port = 0

    # -- lifecycle ----------------------------------------------------------------------------

    def __enter__(self) -> FakeUpstream:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, port: int = 0) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        self.port = sock.getsockname()[1]
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._serve(sock), self._loop).result(10)

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
            self._runner = None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _serve(self, sock: socket.socket) -> None:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=False)
        await self._runner.setup()
        await web.SockSite(self._runner, sock, ssl_context=self.tls).start()

    # -- scripting ----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"{self.base}/v1"

    @property
    def base(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def queue(self, *replies: Reply) -> None:
        """Answer the next matching requests with these replies, in order."""
        with self._lock:
            self._script.extend(replies)

    def last(self, path_suffix: str = "") -> Recorded:
        with self._lock:
            for rec in reversed(self.requests):
                if rec.path.endswith(path_suffix):
                    return rec
        raise AssertionError(f"the stand-in received no request for *{path_suffix}")

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._script.clear()
        self.hung_up.clear()

    def _next(self, rec: Recorded) -> Reply | None:
        with self._lock:
            for i, reply in enumerate(self._script):
                if reply.match is None or reply.match(rec):
                    del self._script[i]
                    return reply
        return None

    # -- serving ------------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        rec = Recorded(
            method=request.method,
            path=request.raw_path,  # as sent: escapes kept, query included
            headers={k.lower(): v for k, v in request.headers.items()},
            body=await request.read(),
        )
        reply = canary_reply(rec.body) if self.answers_canary else None
        if reply is None:  # the canary is the extractor's own business, not the test's
            with self._lock:
                self.requests.append(rec)
            reply = self._next(rec)
        if reply is not None and reply.delay and not await self._wait(request, rec, reply.delay):
            return web.Response(status=499)
        if isinstance(reply, Raw):
            return await self._send(request, rec, reply.status, reply.headers, [reply.body])
        chat = reply if isinstance(reply, Chat) else Chat(content=self.default_text)
        path = request.path
        body = _loads(rec.body)
        if path.endswith("/chat/completions"):
            return await self._chat(request, rec, body, chat)
        if path.endswith("/messages"):
            return await self._messages(request, rec, body, chat)
        if path.endswith("/responses"):
            return await self._responses(request, rec, body, chat)
        if path.endswith("/models"):
            return await self._json(request, rec, _MODELS)
        if path.endswith("/embeddings"):
            return await self._json(request, rec, _embeddings(body))
        return await self._json(request, rec, {"path": request.path, "method": request.method})

    async def _wait(self, request: web.Request, rec: Recorded, seconds: float) -> bool:
        """Sleep, watching the connection; False when the client hung up."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            await asyncio.sleep(0.01)
            transport = request.transport
            if transport is None or transport.is_closing():
                rec.client_hung_up = True
                self.hung_up.set()
                return False
        return True

    async def _json(self, request: web.Request, rec: Recorded, payload: Any) -> web.StreamResponse:
        body = json.dumps(payload).encode()
        return await self._send(request, rec, 200, {"Content-Type": "application/json"}, [body])

    async def _send(
        self,
        request: web.Request,
        rec: Recorded,
        status: int,
        headers: dict[str, str],
        chunks: list[bytes],
        *,
        chunk_delay: float = 0.0,
        stall_after: int | None = None,
    ) -> web.StreamResponse:
        """`stall_after`: send that many chunks, then nothing until the client hangs up."""
        response = web.StreamResponse(status=status, headers=headers)
        if len(chunks) == 1:
            response.content_length = len(chunks[0])
        await response.prepare(request)
        try:
            for i, chunk in enumerate(chunks):
                if stall_after is not None and i >= stall_after:
                    await self._wait(request, rec, 3600.0)
                    return response
                if i and chunk_delay and not await self._wait(request, rec, chunk_delay):
                    return response
                rec.sent.extend(chunk)  # before writing: the client may read it at once
                await response.write(chunk)
            await response.write_eof()
        except (ConnectionResetError, ConnectionError):
            rec.client_hung_up = True
            self.hung_up.set()
        return response

    async def _chat(
        self, request: web.Request, rec: Recorded, body: dict[str, Any], chat: Chat
    ) -> web.StreamResponse:
        model = body.get("model", "stand-in-model")
        if body.get("stream") is True:
            usage = (body.get("stream_options") or {}).get("include_usage") is True
            events = openai_events(chat, model=model, include_usage=usage)
            headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
            return await self._send(
                request, rec, 200, headers, events, chunk_delay=chat.chunk_delay
            )
        return await self._json(request, rec, openai_completion(chat, model=model))

    async def _messages(
        self, request: web.Request, rec: Recorded, body: dict[str, Any], chat: Chat
    ) -> web.StreamResponse:
        model = body.get("model", "stand-in-model")
        if body.get("stream") is True:
            events = anthropic_events(chat, model=model)
            headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
            return await self._send(
                request, rec, 200, headers, events, chunk_delay=chat.chunk_delay
            )
        return await self._json(request, rec, anthropic_message(chat, model=model))

    async def _responses(
        self, request: web.Request, rec: Recorded, body: dict[str, Any], chat: Chat
    ) -> web.StreamResponse:
        from tests.fakes.responses import response_events, response_object

        if body.get("stream") is True:
            events = response_events(chat, body=body)
            headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
            return await self._send(
                request, rec, 200, headers, events, chunk_delay=chat.chunk_delay
            )
        return await self._json(request, rec, response_object(chat, body=body))


# -- the canary --------------------------------------------------------------------------------

# The extractor asks each model a turn with a known answer before its first job; the stand-in
# answers it as a model fit for extraction would, without recording it or taking a scripted
# reply (tests/fakes/local_model.py can answer it otherwise).
CANARY_ANSWER: dict[str, Any] = {
    "new_beliefs": [
        {
            "type": "preference",
            "canonical_name": "peanut_allergy",
            "content": "Is allergic to peanuts.",
            "why_it_matters": "Never suggest food with peanuts.",
            "aliases": ["peanuts"],
            "rejected_alternatives": [],
            "confidence": 0.9,
        }
    ],
    "belief_updates": [],
    "entity_updates": [],
    "resolved_open_questions": [],
}


def canary_reply(raw: bytes) -> Chat | None:
    """The known answer, as text or as the forced tool call, for a canary request; else None."""
    from extractor.canary import CANARY_USER

    if CANARY_USER.encode() not in raw:  # ASCII, so the same in the request's JSON
        return None
    answer = json.dumps(CANARY_ANSWER)
    tools = _loads(raw).get("tools") or []
    if not tools:
        return Chat(content=answer)
    name = tools[0].get("name") or tools[0].get("function", {}).get("name", "extraction")
    return Chat(content="", tool_calls=[{"id": "canary", "name": name, "arguments": answer}])


# -- the listing and the embeddings (the chat replies are in wire.py) ------------------------

_MODELS = {
    "object": "list",
    "data": [
        {"id": "stand-in-model", "object": "model", "created": CREATED, "owned_by": "stand-in"},
        {"id": "gpt-4o-mini", "object": "model", "created": CREATED, "owned_by": "stand-in"},
    ],
}


def _loads(raw: bytes) -> dict[str, Any]:
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _embeddings(body: dict[str, Any]) -> dict[str, Any]:
    inputs = body.get("input", "")
    items = inputs if isinstance(inputs, list) else [inputs]
    return {
        "object": "list",
        "data": [
            {"object": "embedding", "index": i, "embedding": [0.1, -0.2, 0.3]}
            for i in range(len(items))
        ],
        "model": body.get("model", "stand-in-embed"),
        "usage": {"prompt_tokens": 3, "total_tokens": 3},
    }


def main() -> None:
    """Serve until killed: `python -m tests.fakes.upstream [port] [reply-file]` (prints the
    port); the file's text is the answer when nothing is queued."""
    import sys
    from pathlib import Path

    upstream = FakeUpstream()
    if len(sys.argv) > 2:
        upstream.default_text = Path(sys.argv[2]).read_text()
    upstream.start(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    print(upstream.port, flush=True)
    # The benchmark sends many requests: keep no history.
    upstream.requests = _Discard()
    threading.Event().wait()


class _Discard(list[Recorded]):
    def append(self, item: Recorded) -> None:
        pass


if __name__ == "__main__":
    main()
