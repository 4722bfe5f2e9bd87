"""The turn of one exchange on its way to extraction: the relayed reply (the exchange's
`chunks`) with the request's identity and memory; and a turn whose tool loop was cut off.

With the whole reply captured, `before_end` commits the turn's job before the client sees the
reply's end, so a turn the client received in full survives a kill; a reply cut short is
handed over once it stops (`hand_over_rest`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from beliefs.context.render import strip_injected
from extractor.turn import Turn
from proxy.gateway.forward import Exchange
from proxy.gateway.request import ChatRequest
from proxy.gateway.turn_loop import TurnLoop
from proxy.gateway.turns import CapturedTurn, enqueue_turn, make_durable, named_calls
from proxy.runtime import Runtime


@dataclass(slots=True)
class TurnCapture:
    rt: Runtime
    request: ChatRequest
    handed_over: bool = False

    async def before_end(self, outcome: Exchange) -> None:
        """The whole reply is here: write the turn before the client sees its end."""
        if 200 <= outcome.status < 300:
            self.handed_over = True
            await make_durable(self.rt, self.turn(outcome))

    def hand_over_rest(self, outcome: Exchange) -> None:
        """A stream the client or the upstream cut short still hands over what arrived."""
        if outcome.chunks and 200 <= outcome.status < 300 and not self.handed_over:
            enqueue_turn(self.rt.writer, self.turn(outcome), self.rt.seen)

    def turn(self, outcome: Exchange) -> CapturedTurn:
        request, memory = self.request, self.request.memory
        return CapturedTurn(
            request_id=request.entry.request_id,
            wire=request.entry.wire,
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
        )


def note_turn(rt: Runtime, request: ChatRequest, earlier: TurnLoop, answer: str) -> None:
    """Note the request's typed message as under way, and hand the one before it to extraction
    when its loop was cut off before a final answer (the user interrupted it and typed again):
    its words are the user's as much as any. Only a turn that began in this process counts, so
    a history replayed after a restart is not extracted again."""
    identity, turn = request.identity, request.turn
    key = turn.key(identity)
    if not request.extract or not request.until_final or key is None:
        return
    rt.seen.begin(identity.user_id, identity.agent_id, key)
    earlier_key = earlier.key(identity)
    if turn.looping or not earlier.looping or earlier_key is None:
        return
    if not rt.seen.unfinished(identity.user_id, identity.agent_id, earlier_key):
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
        wire="anthropic" if request.entry.wire == "anthropic" else "openai",
    )
    rt.writer.submit_job(lambda: job)
