"""The stand-in playing the models: the agent's (tool calls, then an answer) and the extractor's.

Every reply is chosen by what the request carries, the way a model would answer it: a typed
message gets the tool call, the request holding its result gets the answer, a subagent's request
gets the subagent's report; an extraction request gets beliefs drawn only from the words inside
its `<user>` section, and nothing (empty lists) when no scripted reply fits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from tests.fakes.upstream import Chat, FakeUpstream, Recorded, Reply

EXTRACTOR_PROMPT = "You keep the long-term memory of an AI assistant."
EMPTY_EXTRACTION = json.dumps(
    {"new_beliefs": [], "belief_updates": [], "entity_updates": [], "resolved_open_questions": []}
)
SUBAGENT_HEADER = "x-claude-code-agent-id"
_RELEVANT = re.compile(r'<tenure-memory kind="relevant">.*?</tenure-memory>', re.DOTALL)
_USER = re.compile(r"<user>\n(.*?)\n</user>", re.DOTALL)
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def is_extraction(rec: Recorded) -> bool:
    """The extractor's request, however LiteLLM shaped it for the provider."""
    return EXTRACTOR_PROMPT in rec.body.decode("utf-8", "replace")


def extraction(payload: dict[str, Any], match: Callable[[Recorded], bool]) -> Chat:
    """The same reply whichever way the extractor asks: JSON content or LiteLLM's tool call."""
    text = json.dumps({**json.loads(EMPTY_EXTRACTION), **payload})
    return Chat(
        content=text,
        tool_calls=[{"id": "t1", "name": "json_tool_call", "arguments": text}],
        match=match,
    )


class ModelStandIn(FakeUpstream):
    """The stand-in provider; an extraction request no scripted reply fits gets empty lists."""

    def _next(self, rec: Recorded) -> Reply | None:
        reply = super()._next(rec)
        if reply is None and is_extraction(rec):
            return extraction({}, lambda _: True)
        return reply


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)


def relevant_blocks(rec: Recorded) -> list[str]:
    """The relevant-memory blocks in the provider's copy of a request."""
    return [m.group(0) for s in strings(rec.json) for m in _RELEVANT.finditer(s)]


def user_words(rec: Recorded) -> str:
    """What an extraction request shows as the turn's user words (its last `<user>` section)."""
    found = [m.group(1) for s in strings(rec.json) for m in _USER.finditer(s)]
    return found[-1] if found else ""


def _last_item(body: dict[str, Any]) -> Any:
    # Claude Code may end its messages with a `system` one (its mid-conversation system text).
    items = body.get("messages") or body.get("input") or []
    spoken = [
        i for i in items if isinstance(i, dict) and i.get("role") not in ("system", "developer")
    ]
    return spoken[-1] if spoken else None


def ends_with_tool_result(rec: Recorded) -> bool:
    """The request carries a tool's result last (Anthropic `tool_result`, Responses output)."""
    last = _last_item(rec.json or {})
    if not isinstance(last, dict):
        return False
    if last.get("type") in _OUTPUTS:
        return True
    content = last.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def typed_last(rec: Recorded, typed: str) -> bool:
    """The request ends with the user message holding `typed` (a turn's first request)."""
    last = _last_item(rec.json or {})
    return isinstance(last, dict) and any(typed in s for s in strings(last.get("content")))


def is_agent_call(rec: Recorded) -> bool:
    """A request of the agent's own loop: it offers tools (Claude Code in `tools`, Codex in an
    `additional_tools` input item) and is neither extraction nor a subagent's."""
    if rec.method != "POST" or is_extraction(rec) or SUBAGENT_HEADER in rec.headers:
        return False
    body = rec.json or {}
    if body.get("tools"):
        return True
    items = body.get("input")
    return isinstance(items, list) and any(
        isinstance(i, dict) and i.get("type") == "additional_tools" for i in items
    )


def tool_loop(typed: str, call: dict[str, Any], answer: str) -> tuple[list[Recorded], list[Chat]]:
    """The agent model's replies for one typed message: `call` first, then `answer` once the
    tool's result comes back. The list fills with the requests they answered, in order."""
    answered: list[Recorded] = []

    def asks(rec: Recorded) -> bool:
        if is_agent_call(rec) and typed_last(rec, typed) and not ends_with_tool_result(rec):
            answered.append(rec)
            return True
        return False

    def returns(rec: Recorded) -> bool:
        body = rec.body.decode("utf-8", "replace")
        if is_agent_call(rec) and ends_with_tool_result(rec) and call["id"] in body:
            answered.append(rec)
            return True
        return False

    return answered, [
        Chat(content="", tool_calls=[call], match=asks),
        Chat(content=answer, match=returns),
    ]


def claude_read(path: str) -> dict[str, Any]:
    return {
        "id": "toolu_standin_read",
        "name": "Read",
        "arguments": json.dumps({"file_path": path}),
    }


def agents_read(path: str) -> dict[str, Any]:
    """A call of the `read_file` function tool the check gives the Agents SDK's agent."""
    return {"id": "call_standin_read", "name": "read_file", "arguments": json.dumps({"path": path})}


def codex_exec() -> dict[str, Any]:
    code = 'const out = await tools.exec_command({cmd: "cat app.py"});\ntext(out);'
    return {"id": "call_standin_exec", "name": "exec", "input": code}


def claude_agent(prompt: str) -> dict[str, Any]:
    arguments = {
        "description": "Survey the project",
        "prompt": prompt,
        "subagent_type": "general-purpose",
    }
    return {"id": "toolu_standin_agent", "name": "Agent", "arguments": json.dumps(arguments)}


def subagent_reply(report: str, seen: list[Recorded]) -> Chat:
    """The subagent model's answer, for any request marked as a subagent's."""

    def match(rec: Recorded) -> bool:
        if SUBAGENT_HEADER in rec.headers and not is_extraction(rec):
            seen.append(rec)
            return True
        return False

    return Chat(content=report, match=match)
