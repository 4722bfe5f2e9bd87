"""The chat endpoints: OpenAI `chat/completions` and Anthropic `messages`.

One request: read and check the body, resolve identity, answer a chat command, place memory
(a tool loop's request gets its typed message's again), forward (or translate through LiteLLM
for configured models), relay the reply as it arrives, then record the injection and, with the
turn's final answer, hand the turn to extraction.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from starlette.types import Receive, Scope, Send

from proxy.gateway import placement, synthetic
from proxy.gateway.authorship import subagent_marker
from proxy.gateway.capture import note_turn
from proxy.gateway.chat_commands import (
    SAVE_SQL,
    ChatCommand,
    ChatState,
    apply_command,
    parse_command,
)
from proxy.gateway.forward import Header
from proxy.gateway.handoff import Handoff
from proxy.gateway.harness import user_words
from proxy.gateway.identity import Identity
from proxy.gateway.loop_memory import turn_memory
from proxy.gateway.memory import Memory
from proxy.gateway.replies import send_bytes, send_events
from proxy.gateway.request import ChatRequest, Entry, read_request
from proxy.gateway.request_body import check_chat
from proxy.gateway.side_calls import is_task_call
from proxy.gateway.turn_loop import chat_turn, earlier_turn
from proxy.runtime import Runtime
from proxy.scopes import client_grant
from proxy.security.grants import Grant

log = logging.getLogger("tenure.proxy")


async def handle_chat(
    rt: Runtime, entry: Entry, scope: Scope, receive: Receive, send: Send
) -> None:
    anthropic = entry.wire == "anthropic"
    request = await read_request(
        rt,
        entry,
        scope,
        receive,
        check=partial(check_chat, anthropic=anthropic),
        unecho=partial(placement.without_echoed_memory, anthropic=anthropic),
    )
    identity, state, body = request.identity, request.state, request.body
    messages: list[Any] = body["messages"]
    if anthropic:
        tool_turn = placement.anthropic_ends_with_tool_result(messages)
        said = placement.anthropic_last_user_text(messages)
    else:
        tool_turn = placement.openai_ends_with_tool_result(messages)
        said = placement.openai_last_user_text(messages)
    turn = chat_turn(messages)
    query = user_words(turn.words)  # the user's words, not the agent harness around them
    last = messages[-1] if messages else None
    if not tool_turn and isinstance(last, dict) and last.get("role") == "user":
        command = parse_command(placement.text_of(last.get("content")))
        if command is not None:
            reply = run_command(rt, identity, state, command, client_grant(scope))
            await _send_synthetic(request, reply, send=send)
            return

    memory: Memory | None = None
    if not (identity.incognito or identity.no_inject or not state.inject):
        memory = await turn_memory(rt.memory, rt.loops, identity, turn, query, request.model)
        if memory is not None and memory.empty:
            memory = None
    if b'"tenure_' in request.raw and placement.has_tenure_metadata(body):
        # Tenure's keys are for Tenure; a provider may refuse unknown ones.
        request.rewrite(placement.without_tenure_metadata(body))
    if memory is not None:
        place = placement.place_anthropic if anthropic else placement.place_openai
        placed = place(request.body, memory.system_block, memory.user_block, at=turn.at)
        request.rewrite(placed)
        request.memory = memory
    extract = not (identity.incognito or identity.no_extract or not state.extract)
    system = placement.system_texts(body, anthropic=anthropic)
    if extract and is_task_call(said, system):
        extract = False  # an app's title or tag call: not a turn, not a reinforcement
    if extract and subagent_marker(scope["headers"], system) is not None:
        extract = False  # a subagent's prompt is the parent model's text, not the user's
    request.extract, request.turn, request.until_final = extract, turn, True
    request.user_message = turn.words
    note_turn(rt, request, *earlier_turn(messages, turn, responses=False))
    handoff = Handoff(rt, request)
    extra: list[Header] = request.memory_headers()
    handoff.finish(await handoff.forward(receive, send, extra))


def run_command(
    rt: Runtime,
    identity: Identity,
    state: ChatState,
    command: ChatCommand,
    grant: Grant | None = None,
) -> str:
    """Apply a chat command; the new state is kept in memory and written in the background.

    Raises:
        ProxyError: 403 for a `!scope` outside a client token's scope patterns.
    """
    new_state, reply = apply_command(state, command)
    if grant is not None:  # a scope set before (by the operator) stays the operator's to keep
        grant.check_scopes(set(new_state.scopes) - set(state.scopes), "!scope")
    if new_state != state:
        rt.chat_states.set(identity.user_id, identity.agent_id, new_state)
        row: list[object] = [identity.user_id, identity.agent_id or ""]
        row += [list(new_state.scopes), new_state.extract, new_state.inject]
        rt.writer.submit("chat_state", lambda store: store.execute(SAVE_SQL, row))
    rt.counters.chat_commands += 1
    return reply


async def _send_synthetic(request: ChatRequest, text: str, *, send: Send) -> None:
    body, model, stream = request.body, request.model, request.stream
    headers = [(b"x-tenure-injected", b"0")]
    rid = request.entry.request_id
    if request.entry.wire == "anthropic":
        if stream:
            await send_events(
                send, synthetic.anthropic_stream(text, model=model, request_id=rid), headers=headers
            )
        else:
            await send_bytes(
                send,
                200,
                synthetic.anthropic_reply(text, model=model, request_id=rid),
                headers=headers,
            )
        return
    if stream:
        options = body.get("stream_options") or {}
        events = synthetic.openai_stream(
            text, model=model, request_id=rid, include_usage=options.get("include_usage") is True
        )
        await send_events(send, events, headers=headers)
    else:
        await send_bytes(
            send, 200, synthetic.openai_reply(text, model=model, request_id=rid), headers=headers
        )
