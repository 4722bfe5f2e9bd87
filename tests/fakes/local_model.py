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
- `prompt_cache`: OpenAI's automatic prompt caching: of a prompt of 1,024 tokens or more, the
  start it shares with an earlier prompt is reported as `cached_tokens`, in steps of 128 (the
  schema counts as the start of the prompt, before the messages).

`tokens` counts a text's tokens (chars / 4 unless given); with `prompt_cache` the usage counts
the whole prompt with it, schema and tools included.

What the "model" answers is a `brain(request) -> dict | None`: the extraction JSON for the
request it sees, or None to chat instead (a base model without the rules does that).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.upstream import Chat, FakeUpstream, Recorded, openai_completion

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


class LocalModel(FakeUpstream):
    """Start with `with LocalModel(Behaviour(...)) as server:`; `server.url` ends in `/v1`."""

    def __init__(
        self,
        behaviour: Behaviour | None = None,
        brain: Brain = sql_brain,
        tokens: Callable[[str], int] | None = None,
    ) -> None:
        super().__init__()
        self.behaviour = behaviour or Behaviour()
        self.brain = brain
        self.tokens = tokens or (lambda text: len(text) // 4)
        self._prompts: list[str] = []  # every prompt seen, for the prompt cache

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
        answer = self.brain(seen)
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
        total = self.tokens(prompt)
        cached = self.tokens(prompt[:shared]) // 128 * 128 if total >= 1024 else 0
        return {
            "prompt_tokens": total,
            "prompt_tokens_details": {"cached_tokens": cached if cached >= 1024 else 0},
        }

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
    """Serve until killed: `python -m tests.fakes.local_model PORT [--reference] [behaviours]`,
    behaviours named like the fields (`--refuse-json-schema --drop-system`)."""
    import argparse
    import threading

    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--reference", action="store_true", help="answer the shipped set's gold")
    for name in Behaviour.__dataclass_fields__:
        if name not in ("max_schema_length", "context_window"):
            parser.add_argument(f"--{name.replace('_', '-')}", action="store_true")
    args = parser.parse_args()
    behaviour = Behaviour(
        **{k: getattr(args, k) for k in Behaviour.__dataclass_fields__ if hasattr(args, k)}
    )
    brain: Brain = sql_brain
    if args.reference:
        from extractor.eval_set import load_conversations
        from tests.fakes.reference_model import reference_brain

        brain = reference_brain(load_conversations())
    server = LocalModel(behaviour, brain)
    server.start(args.port)
    print(server.port, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
