"""The Responses API endpoint (`POST /v1/responses`): Codex CLI, the OpenAI Agents SDK and
every client on `responses.create`, with memory as on the chat endpoints.

One request: read and check the body, resolve identity, answer a chat command, place memory
(`instructions` and the turn's typed user message, again on every request of its tool loop),
forward (or answer through LiteLLM for a routed model), relay the reply as it arrives, then
record the injection and, with the turn's final answer, hand the turn — the typed words, the
answer and the loop's calls — to extraction.
"""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from proxy.gateway import responses_body as shape
from proxy.gateway.authorship import subagent_marker
from proxy.gateway.capture import note_turn
from proxy.gateway.chat import run_command
from proxy.gateway.chat_commands import parse_command
from proxy.gateway.forward import Header
from proxy.gateway.handoff import Handoff
from proxy.gateway.harness import user_words
from proxy.gateway.loop_memory import turn_memory
from proxy.gateway.memory import Memory
from proxy.gateway.placement import has_tenure_metadata, without_tenure_metadata
from proxy.gateway.replies import send_bytes, send_events
from proxy.gateway.request import Entry, read_request
from proxy.gateway.responses_stream import response_events, response_reply
from proxy.gateway.side_calls import is_task_call
from proxy.gateway.turn_loop import chained, earlier_turn, responses_turn
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

    turn = responses_turn(body)
    memory: Memory | None = None
    if not (identity.incognito or identity.no_inject or not state.inject):
        query = user_words(turn.words)
        memory = await turn_memory(rt.memory, rt.loops, identity, turn, query, model)
        if memory is not None and memory.empty:
            memory = None
    if b'"tenure_' in request.raw and has_tenure_metadata(body):
        request.rewrite(without_tenure_metadata(body))
    if memory is not None:
        blocks = (memory.system_block, memory.user_block)
        request.rewrite(shape.place_responses(request.body, *blocks, at=turn.at))
        request.memory = memory
    extract = not (identity.incognito or identity.no_extract or not state.extract)
    instructions = body.get("instructions")
    system = [instructions] if isinstance(instructions, str) else []
    if extract and is_task_call(said, system):
        extract = False
    if extract and subagent_marker(scope["headers"], system) is not None:
        extract = False  # a subagent's prompt is the parent model's text, not the user's
    request.extract, request.turn, request.user_message = extract, turn, turn.words
    # A chained request does not send its history again: its own reply ends its part of the turn.
    request.until_final = not chained(body)
    items = body.get("input")
    note_turn(
        rt, request, *earlier_turn(items if isinstance(items, list) else [], turn, responses=True)
    )
    handoff = Handoff(rt, request)
    extra_headers: list[Header] = request.memory_headers()
    handoff.finish(await handoff.forward(receive, send, extra_headers))
