"""A stand-in local model server: an OpenAI-compatible HTTP server that behaves like the local
servers users run (llama.cpp's server, llama-cpp-python, Ollama), one switch per behaviour.

- `refuse_json_schema`: 500 "Input should be 'text' or 'json_object'" (llama-cpp-python);
- `max_schema_length`: a schema with a longer `maxLength` fails to become a grammar (llama.cpp);
- `refuse_json_object`, `refuse_tools`: 400 for those modes;
- `drop_system`: the chat template drops system messages (llama-cpp-python's gemma format);
  the prompt's token count (chars / 4) shows it;
- `truncate_below`: a reply longer than `max_tokens * 4` characters is cut there, with
  finish_reason "length"; no `max_tokens` at all means an unbounded budget;
- `fence`: the JSON comes inside a ```json fence, with prose around it;
- `raw_newlines`: new lines inside JSON strings are sent raw (not as \\n);
- `garbage`: a 200 response whose body is not JSON;
- `context_window`: a prompt plus `max_tokens` beyond it is refused (llama-cpp-python's 400);
- a streamed request (`"stream": true`) gets its reply in `tokens` pieces (default: one per
  4 characters), `token_gap` seconds apart (a slow CPU model); `stall_after`: after that many
  pieces it goes silent until the client hangs up; `stream_usage=False`: no usage chunk even
  when asked for one (llama-cpp-python); `ignore_stream`: the whole completion as JSON instead;
- `prompt_cache`: OpenAI's automatic prompt caching: of a prompt of 1,024 tokens or more, the
  start it shares with an earlier prompt is reported as `cached_tokens`, in steps of 128 (the
  schema counts as the start of the prompt, before the messages).

`count_tokens` counts a text's tokens (chars / 4 unless given); with `prompt_cache` the usage
counts the whole prompt with it, schema and tools included.

What the "model" answers is a `brain(request) -> dict | None`: the extraction JSON for the
request it sees, or None to chat instead (a base model without the rules does that).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from extractor.canary import CANARY_USER
from tests.fakes.upstream import CANARY_ANSWER, Chat, FakeUpstream, Recorded, openai_completion

RULES_MARK = "You keep the long-term memory of an AI assistant"
_USER_TURN = re.compile(r"<user>\n([\s\S]*?)\n</user>")

Brain = Callable[["SeenRequest"], "dict[str, Any] | None"]


@dataclass
class SeenRequest:
    """A request as the model sees it, after the chat template did its work."""

    body: dict[str, Any]
    messages: list[dict[str, Any]]  # what reached the model (system dropped if so)

    @property
    def knows_rules(self) -> bool:
        return any(RULES_MARK in str(m.get("content", "")) for m in self.messages)

    @property
    def turn_text(self) -> str:
        """The user's words of the turn being extracted (the last `<user>` block; a re-ask
        comes after it)."""
        for message in reversed(self.messages):
            found = _USER_TURN.findall(str(message.get("content", "")))
            if found:
                return str(found[-1])
        return ""

    @property
    def is_canary(self) -> bool:
        return self.turn_text == CANARY_USER

    @property
    def turn_message(self) -> str:
        """The whole message that carries the turn (with its known beliefs)."""
        for message in reversed(self.messages):
            if _USER_TURN.search(str(message.get("content", ""))):
                return str(message.get("content", ""))
        return ""


@dataclass
class Behaviour:
    refuse_json_schema: bool = False
    max_schema_length: int | None = None
    refuse_json_object: bool = False
    refuse_tools: bool = False
    drop_system: bool = False
    truncate_below: bool = False
    fence: bool = False
    raw_newlines: bool = False
    garbage: bool = False
    context_window: int | None = None  # tokens (chars / 4) the prompt and max_tokens must fit
    tokens: int | None = None  # pieces a streamed reply is sent in (None: one per 4 characters)
    token_gap: float = 0.0  # seconds between two streamed pieces
    stall_after: int | None = None  # pieces sent before it goes silent for good
    stream_usage: bool = True
    ignore_stream: bool = False  # a streamed request gets the whole completion as JSON
    prompt_cache: bool = False


def empty() -> dict[str, Any]:
    return {
        "new_beliefs": [],
        "belief_updates": [],
        "entity_updates": [],
        "resolved_open_questions": [],
    }


def sql_brain(seen: SeenRequest) -> dict[str, Any] | None:
    """Knows one thing to extract, and only when the rules reached it; chats otherwise."""
    if not seen.knows_rules:
        return None
    out = empty()
    out["new_beliefs"].append(
        {
            "type": "preference",
            "canonical_name": "sql_style",
            "content": "Writes SQL in upper-case keywords, for example:\n```sql\nSELECT id "
            "FROM users;\n```",
            "why_it_matters": "Write SQL keywords in upper case.",
            "aliases": ["sql"],
            "rejected_alternatives": ["lower-case sql"],
            "confidence": 0.9,
        }
    )
    return out


def canary_brain(seen: SeenRequest) -> dict[str, Any] | None:
    """The canary turn's known answer, given when the rules reached the model."""
    return CANARY_ANSWER if seen.knows_rules else None


class LocalModel(FakeUpstream):
    """Start with `with LocalModel(Behaviour(...)) as server:`; `server.url` ends in `/v1`.

    `canary`: how the canary turn is answered (right, by default); None: by `brain`, like
    any turn.
    """

    answers_canary = False  # it is a model: its canary answer is recorded like any other

    def __init__(
        self,
        behaviour: Behaviour | None = None,
        brain: Brain = sql_brain,
        *,
        canary: Brain | None = canary_brain,
        count_tokens: Callable[[str], int] | None = None,
    ) -> None:
        super().__init__()
        self.behaviour = behaviour or Behaviour()
        self.brain = brain
        self.count_tokens = count_tokens or (lambda text: len(text) // 4)
        self._prompts: list[str] = []  # every prompt seen, for the prompt cache
        self.canary = canary

    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    async def _chat(
        self, request: web.Request, rec: Recorded, body: dict[str, Any], chat: Chat
    ) -> web.StreamResponse:
        b = self.behaviour
        refusal = self._refusal(body)
        if refusal is not None:
            status, payload = refusal
            return await self._send(
                request,
                rec,
                status,
                {"Content-Type": "application/json"},
                [json.dumps(payload).encode()],
            )
        if b.garbage:
            return await self._send(
                request, rec, 200, {"Content-Type": "application/json"}, [b"<html>oops</html>"]
            )
        messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
        if b.drop_system:
            messages = [m for m in messages if m.get("role") != "system"]
        seen = SeenRequest(body, messages)
        answer = (self.canary if seen.is_canary and self.canary else self.brain)(seen)
        if answer is None:
            text = "Hello! How can I help you today?"
        else:
            text = json.dumps(answer, ensure_ascii=False, indent=1 if b.raw_newlines else None)
            if b.raw_newlines:
                text = text.replace("\\n", "\n")
            if b.fence:
                text = f"Here is the JSON you asked for:\n```json\n{text}\n```\nAnything else?"
        finish = "stop"
        budget = body.get("max_tokens")
        if b.truncate_below and isinstance(budget, int) and len(text) > budget * 4:
            text, finish = text[: budget * 4], "length"
        payload = openai_completion(Chat(content=text), model=str(body.get("model", "local")))
        chars = sum(len(str(m.get("content", ""))) for m in messages)
        payload["usage"] = {
            "prompt_tokens": chars // 4 + 8,
            "completion_tokens": len(text) // 4 + 1,
            "total_tokens": chars // 4 + len(text) // 4 + 9,
        }
        if b.prompt_cache:
            usage = payload["usage"]
            usage.update(self.cache_usage(body, messages))
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        tools = body.get("tools")
        streamed = body.get("stream") is True and not b.ignore_stream
        if not streamed and not await self._generate(request, rec, text):
            return web.Response(status=499)
        if streamed:
            call = tools[0]["function"]["name"] if answer is not None and tools else None
            return await self._stream(request, rec, body, text, finish, call, payload["usage"])
        if answer is not None and tools and not b.refuse_tools:
            payload["choices"][0]["message"] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": tools[0]["function"]["name"], "arguments": text},
                    }
                ],
            }
        payload["choices"][0]["finish_reason"] = finish
        return await self._json(request, rec, payload)

    def cache_usage(self, body: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
        """Prompt tokens and cached tokens of a request, as OpenAI's automatic cache reports
        them after every request this server has seen."""
        schema = json.dumps([body.get("response_format"), body.get("tools")])
        prompt = schema + "".join(f"\n{m.get('role')}: {m.get('content')}" for m in messages)
        shared = max((_common_start(prompt, seen) for seen in self._prompts), default=0)
        self._prompts.append(prompt)
        total = self.count_tokens(prompt)
        cached = self.count_tokens(prompt[:shared]) // 128 * 128 if total >= 1024 else 0
        return {
            "prompt_tokens": total,
            "prompt_tokens_details": {"cached_tokens": cached if cached >= 1024 else 0},
        }

    async def _generate(self, request: web.Request, rec: Recorded, text: str) -> bool:
        """An unstreamed reply takes as long to write as a streamed one (False: hung up)."""
        b = self.behaviour
        pieces = b.tokens or max(1, -(-len(text) // 4))
        if b.stall_after is not None:
            return await self._wait(request, rec, 3600.0)
        return not b.token_gap or await self._wait(request, rec, pieces * b.token_gap)

    async def _stream(
        self,
        request: web.Request,
        rec: Recorded,
        body: dict[str, Any],
        text: str,
        finish: str,
        tool: str | None,
        usage: dict[str, int],
    ) -> web.StreamResponse:
        """The reply as SSE chunks, piece by piece, at the behaviour's pace."""
        b = self.behaviour
        headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        base = {"id": "chatcmpl-local", "object": "chat.completion.chunk", "created": 0}
        base["model"] = str(body.get("model", "local"))

        def data(payload: dict[str, Any]) -> bytes:
            return b"data: " + json.dumps({**base, **payload}).encode() + b"\n\n"

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
            return data({"choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})

        def piece(part: str) -> dict[str, Any]:
            if tool is None:
                return {"content": part}
            return {"tool_calls": [{"index": 0, "function": {"arguments": part}}]}

        count = min(b.tokens or -(-len(text) // 4), len(text)) or 1
        cuts = [len(text) * i // count for i in range(count + 1)]
        first: dict[str, Any] = {"role": "assistant", "content": ""}
        if tool is not None:
            call = {"name": tool, "arguments": ""}
            first["tool_calls"] = [
                {"index": 0, "id": "call_1", "type": "function", "function": call}
            ]
        events = [chunk(first)]
        events += [chunk(piece(text[i:j])) for i, j in itertools.pairwise(cuts)]
        events.append(chunk({}, "tool_calls" if tool is not None and finish == "stop" else finish))
        wants_usage = (body.get("stream_options") or {}).get("include_usage") is True
        if wants_usage and b.stream_usage:
            events.append(data({"choices": [], "usage": usage}))
        events.append(b"data: [DONE]\n\n")
        stall = None if b.stall_after is None else b.stall_after + 1  # the role chunk first
        return await self._send(
            request, rec, 200, headers, events, chunk_delay=b.token_gap, stall_after=stall
        )

    def _refusal(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        b = self.behaviour
        fmt = body.get("response_format")
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if kind == "json_schema" and b.refuse_json_schema:
            detail = {"loc": ["body", "response_format", "type"], "msg": _LLAMA_CPP_PYTHON}
            return 500, {"detail": [detail]}
        if kind == "json_schema" and b.max_schema_length is not None:
            longest = max(_max_lengths(fmt), default=0)
            if longest > b.max_schema_length:
                return 500, {"error": {"message": _GRAMMAR_FAILURE, "type": "server_error"}}
        if kind == "json_object" and b.refuse_json_object:
            return 400, {"error": {"message": "response_format json_object is not supported"}}
        if b.context_window is not None:
            chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
            wanted = chars // 4 + int(body.get("max_tokens") or 0)
            if wanted > b.context_window:
                message = f"Requested tokens ({wanted}) exceed context window of {b.context_window}"
                return 400, {"error": {"message": message, "type": "invalid_request_error"}}
        if body.get("tools") and b.refuse_tools:
            return 400, {"error": {"message": "this model does not support tools"}}
        return None


_LLAMA_CPP_PYTHON = "Input should be 'text' or 'json_object'"
_GRAMMAR_FAILURE = (
    "failed to parse grammar: number of rules that are going to be repeated exceeds sane defaults"
)


def _common_start(one: str, other: str) -> int:
    """How many characters two prompts share from their start (a binary search: prompts are
    long and many)."""
    low, high = 0, min(len(one), len(other))
    while low < high:
        mid = (low + high + 1) // 2
        if one[:mid] == other[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _max_lengths(node: Any) -> list[int]:
    if isinstance(node, dict):
        own = [int(node["maxLength"])] if isinstance(node.get("maxLength"), int) else []
        return own + [n for value in node.values() for n in _max_lengths(value)]
    if isinstance(node, list):
        return [n for value in node for n in _max_lengths(value)]
    return []


def main() -> None:
    """Serve until killed: `python -m tests.fakes.local_model PORT [--reference | --base-model]
    [behaviours]`, behaviours named like the fields (`--refuse-json-schema --drop-system
    --tokens 200 --token-gap 1 --no-stream-usage`)."""
    import argparse
    import dataclasses
    import threading

    parser = argparse.ArgumentParser(prog="python -m tests.fakes.local_model")
    parser.add_argument("port", type=int, help="0: any free port (printed)")
    brains = parser.add_mutually_exclusive_group()
    brains.add_argument("--reference", action="store_true", help="answer the shipped set's gold")
    brains.add_argument(
        "--base-model", action="store_true", help="answer every turn, the canary's too, empty"
    )
    for f in dataclasses.fields(Behaviour):
        flag = f"--{f.name.replace('_', '-')}"
        if f.default is True:
            parser.add_argument(
                f"--no-{f.name.replace('_', '-')}", dest=f.name, action="store_false"
            )
        elif f.default is False:
            parser.add_argument(flag, action="store_true")
        else:
            parser.add_argument(flag, type=float if f.name == "token_gap" else int)
    args = parser.parse_args()
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(Behaviour)}
    behaviour = Behaviour(**{k: v for k, v in given.items() if v is not None})
    brain: Brain = sql_brain
    canary: Brain | None = canary_brain
    if args.reference:
        from extractor.eval_set import load_conversations
        from tests.fakes.reference_model import reference_brain

        brain = reference_brain(load_conversations())
    if args.base_model:
        brain, canary = (lambda seen: empty()), None
    server = LocalModel(behaviour, brain, canary=canary)
    server.start(args.port)
    print(server.port, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
