"""What a model-call protocol adapter tells the generic handler (`handler.py`).

The handler does everything once (identity, chat controls, memory, forwarding, capture, the
hand-off to the writer); an adapter only knows its protocol's shapes: where the user's words
and the tool loop are in a request body, where memory goes, what a reply the gateway writes
itself looks like, and how to read the finished turn back out of the reply. A new protocol is
one new adapter module and one line of the route table.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from proxy.gateway.assistant_turn import AssistantTurn
from proxy.gateway.forward import Upstream
from proxy.gateway.turn_loop import TurnLoop
from proxy.settings import Settings

Body = dict[str, Any]


class Translation(Protocol):
    """How a model routed through LiteLLM answers the protocol (`translate.py`)."""

    end: bytes  # what closes the translated event stream

    async def call(self, litellm: Any, model: str, body: Body, stream: bool, **kwargs: Any) -> Any:
        """The LiteLLM call for `body` (its own fields already in `kwargs`)."""
        ...

    def event(self, event: Body, model: str) -> bytes:
        """One streamed LiteLLM event as the protocol's SSE bytes, naming the client's model."""
        ...


class WireProtocol(Protocol):
    """One model-call protocol's shapes: request, placement, replies, reading the turn."""

    endpoint: str  # the upstream path after the base URL (and the injection record's)
    turn_wire: Literal["openai", "anthropic"]  # the reply shape the extractor is told of
    translation: Translation | None  # None: never routed through LiteLLM

    def upstream(self, settings: Settings) -> Upstream:
        """The base URL and key the protocol's calls go to."""
        ...

    def check(self, body: Body) -> None:
        """Raises:
        ProxyError: 400 naming the first field the gateway reads that is wrong.
        """
        ...

    def without_echoed_memory(self, body: Body) -> Body:
        """A copy of `body` without memory blocks the client sent back (a replayed prompt)."""
        ...

    def command_text(self, body: Body) -> str | None:
        """The text where a chat command may stand (the last user message), else None."""
        ...

    def turn(self, body: Body) -> TurnLoop:
        """The typed user message the request answers, and its tool loop since."""
        ...

    def earlier(self, body: Body, turn: TurnLoop) -> tuple[TurnLoop, str]:
        """The typed message before `turn` with its loop, and the last answer it got."""
        ...

    def said(self, body: Body) -> str:
        """The last user text, as a side call (a title, a tag) is told apart by."""
        ...

    def system_texts(self, body: Body) -> list[str]:
        """Each text of the system prompt."""
        ...

    def place(self, body: Body, system_block: str, user_block: str, *, at: int | None) -> Body:
        """A copy of `body` with the memory blocks placed; the user block at item `at`."""
        ...

    def until_final(self, body: Body) -> bool:
        """Whether the turn's job waits for its final answer (the history is sent again)."""
        ...

    def synthetic(self, text: str, body: Body, *, request_id: str) -> bytes | list[bytes]:
        """A reply the gateway writes itself: the object, or the events of a stream."""
        ...

    def read_events(self, events: list[Body]) -> AssistantTurn:
        """The assistant turn from a relayed stream's JSON events (a cut-short one too)."""
        ...

    def read_object(self, payload: Body) -> AssistantTurn:
        """The assistant turn from a relayed JSON reply."""
        ...
