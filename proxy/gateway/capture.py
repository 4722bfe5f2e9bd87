"""The finished turn of one exchange on its way to the writer, one way: the handler hands the
relayed reply here, and this module gives the writer the job (`turns.CapturedTurn.to_turn`
builds it: on the loop when the reply's end waits for it, else on the store thread).

With the whole reply captured, `before_end` commits the turn's job before the client sees the
reply's end, so a turn the client received in full survives a kill; a reply cut short is
handed over once it stops (`hand_over_rest`). `note_turn` hands over the turn before a typed
message whose tool loop was cut off.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial

from beliefs.context.render import strip_injected
from extractor.turn import Turn
from proxy.gateway.assistant_turn import AssistantTurn
from proxy.gateway.background import StoreWriter
from proxy.gateway.counters import Counters
from proxy.gateway.forward import Exchange
from proxy.gateway.request import ChatRequest
from proxy.gateway.side_calls import SeenMessages
from proxy.gateway.turn_loop import TurnLoop
from proxy.gateway.turns import CapturedTurn, named_calls, read_reply

log = logging.getLogger("tenure.proxy")


@dataclass(slots=True)
class TurnCapture:
    writer: StoreWriter
    seen: SeenMessages
    counters: Counters
    durable_wait_s: float  # how long a reply's end waits for its job's commit; 0: never
    request: ChatRequest
    handed_over: bool = False
    # Keeps the turn's memory in the store for its tool loop: called when the reply calls tools.
    keep_memory: Callable[[], None] | None = None

    async def before_end(self, outcome: Exchange) -> None:
        """The whole reply is here: write the turn before the client sees its end."""
        if 200 <= outcome.status < 300:
            self.handed_over = True
            reply = None
            if self.keep_memory is not None:
                reply = read_reply(  # read once, here: the job uses it
                    self.request.entry.protocol,
                    outcome.chunks or [],
                    content_type=outcome.content_type,
                    content_encoding=outcome.content_encoding,
                )
                if reply.tool_calls:
                    self.keep_memory()
            await self._make_durable(self.turn(outcome, reply))

    def hand_over_rest(self, outcome: Exchange) -> None:
        """A stream the client or the upstream cut short still hands over what arrived."""
        if outcome.chunks and 200 <= outcome.status < 300 and not self.handed_over:
            self.writer.submit_job(partial(self.turn(outcome).to_turn, self.seen))

    def turn(self, outcome: Exchange, reply: AssistantTurn | None = None) -> CapturedTurn:
        """The finished exchange as the job needs it; `reply`: already read from its bytes."""
        request, memory = self.request, self.request.memory
        return CapturedTurn(
            request_id=request.entry.request_id,
            protocol=request.entry.protocol,
            user_id=request.identity.user_id,
            agent_id=request.identity.agent_id,
            scopes=request.identity.all_scopes,
            model=request.model,
            user_message=request.user_message,
            chunks=outcome.chunks or [],
            content_type=outcome.content_type,
            content_encoding=outcome.content_encoding,
            injected_ids=[i for ids in (memory.layers.values() if memory else ()) for i in ids],
            created_at=datetime.now(UTC),
            tools=request.turn.tools,
            until_final=request.until_final,
            turn_key=request.turn.key(request.identity),
            persona=memory.persona_ref if memory else None,
            reply=reply,
        )

    async def _make_durable(self, captured: CapturedTurn) -> bool:
        """Commit the turn's extraction job now and wait for it: called with the whole reply
        captured, before relaying its last event or bytes, so a turn the client received in
        full survives a kill. False when the store did not take it within `durable_wait_s` or
        refused it: the job then stays with the writer, which keeps trying (see /healthz).
        With `durable_wait_s` 0 the job is only queued (batched, not waited for)."""
        job = partial(captured.to_turn, self.seen)
        if self.durable_wait_s <= 0:
            self.writer.submit_job(job)
            return False
        if await committed_within(self.writer, job, self.durable_wait_s):
            return True
        self.counters.turns_not_durable += 1
        log.warning(
            "turn %s is not on disk yet as its reply ends (the store is slow or refusing "
            "writes); it is kept and written when the store takes it",
            captured.request_id,
        )
        return False


async def committed_within(
    writer: StoreWriter, job: Callable[[], Turn | None], seconds: float
) -> bool:
    """Commit `job` and wait for the commit's answer, or False once `seconds` passed first.

    The reply waits on the commit's own future, which the writer answers as soon as the append
    is over: the reply's task goes on at the loop's next turn (a second future settled from
    the first, or a shield, would cost the reply another turn of a busy loop). A time-out
    settles that future False; a cancelled wait cancels it; the write stays queued either way
    and is written when the store takes it."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[bool] = loop.create_future()
    timer = loop.call_later(seconds, _expire, done)
    try:
        return await writer.commit_job_soon(job, done)
    finally:
        timer.cancel()
        writer.ended(done)


def _expire(done: asyncio.Future[bool]) -> None:
    if not done.done():
        done.set_result(False)


def note_turn(
    writer: StoreWriter, seen: SeenMessages, request: ChatRequest, earlier: TurnLoop, answer: str
) -> None:
    """Note the request's typed message as under way, and hand the one before it to extraction
    when its loop was cut off before a final answer (the user interrupted it and typed again):
    its words are the user's as much as any. Only a turn that began in this process counts, so
    a history replayed after a restart is not extracted again."""
    identity, turn = request.identity, request.turn
    key = turn.key(identity)
    if not request.extract or not request.until_final or key is None:
        return
    seen.begin(identity.user_id, identity.agent_id, key)
    earlier_key = earlier.key(identity)
    if turn.looping or not earlier.looping or earlier_key is None:
        return
    if not seen.unfinished(identity.user_id, identity.agent_id, earlier_key):
        return
    job = Turn(
        request_id=request.entry.request_id,
        user_id=identity.user_id,
        agent_id=identity.agent_id,
        scopes=list(identity.all_scopes),
        model=request.model,
        user_message=earlier.words,
        assistant_message=strip_injected(answer),
        tool_calls=named_calls(earlier.tools),
        created_at=datetime.now(UTC),
        wire=request.entry.protocol.turn_wire,
    )
    writer.submit_job(lambda: job)
