"""The Responses API endpoint (`POST /v1/responses`): Codex CLI, the OpenAI Agents SDK and
every client on `responses.create`, with memory as on the chat endpoints.

One request: read and check the body, resolve identity, answer a chat command, place memory
(`instructions` and the last user message), forward (or answer through LiteLLM for a routed
model), relay the reply as it arrives, then record the injection and hand the finished turn —
the input's user words and the output's text and function calls — to extraction.
"""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from proxy.gateway import responses_body as shape
from proxy.gateway.chat import run_command
from proxy.gateway.chat_commands import parse_command
from proxy.gateway.forward import Header
from proxy.gateway.handoff import Handoff
from proxy.gateway.harness import user_words
from proxy.gateway.memory import Memory
from proxy.gateway.placement import has_tenure_metadata, without_tenure_metadata
from proxy.gateway.replies import send_bytes, send_events
from proxy.gateway.request import Entry, read_request
from proxy.gateway.responses_stream import response_events, response_reply
from proxy.gateway.side_calls import is_task_call
from proxy.runtime import Runtime


async def handle_responses(
    rt: Runtime, entry: Entry, scope: Scope, receive: Receive, send: Send
) -> None:
    request = await read_request(
        rt, entry, scope, receive, check=shape.check_responses, unecho=shape.without_echoed_memory
    )
    identity, state, body = request.identity, request.state, request.body
    model = request.model
    tool_turn = shape.ends_with_tool_output(body)
    said = "" if tool_turn else shape.last_user_text(body)
    typed = shape.last_item_text(body)
    if typed is not None and (command := parse_command(typed)) is not None:
        reply = run_command(rt, identity, state, command)
        rid, extra = entry.request_id, [(b"x-tenure-injected", b"0")]
        if request.stream:
            events = response_events(reply, model=model, request_id=rid)
            await send_events(send, events, headers=extra)
        else:
            data = response_reply(reply, model=model, request_id=rid)
            await send_bytes(send, 200, data, headers=extra)
        return

    memory: Memory | None = None
    if not (identity.incognito or identity.no_inject or not state.inject):
        query = user_words(shape.last_user_text(body))
        memory = await rt.memory.build(identity, query, model, tool_turn=tool_turn)
        if memory is not None and memory.empty:
            memory = None
    if b'"tenure_' in request.raw and has_tenure_metadata(body):
        request.rewrite(without_tenure_metadata(body))
    if memory is not None:
        request.rewrite(shape.place_responses(request.body, memory.system_block, memory.user_block))
        request.memory = memory
    extract = not (identity.incognito or identity.no_extract or not state.extract)
    instructions = request.body.get("instructions")
    if extract and is_task_call(said, [instructions] if isinstance(instructions, str) else []):
        extract = False
    request.extract, request.user_message = extract, said
    handoff = Handoff(rt, request)
    extra_headers: list[Header] = [(b"x-tenure-injected", str(request.injected).encode())]
    handoff.finish(await handoff.forward(receive, send, extra_headers))
