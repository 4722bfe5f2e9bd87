"""Recent turns, read through the extractor's job queue when it exists: where new names show up."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from beliefs.context.render import strip_injected
from beliefs.store.belief_store import BeliefStore
from extractor.queued_turns import recent_turns as queued_turns

UNIVERSAL = "user:universal"
MAX_TURNS = 200


@dataclass(frozen=True)
class RecentTurn:
    """What the user said in one exchange (the proxy's injected memory already stripped)."""

    user_id: str
    scopes: tuple[str, ...]
    model: str
    user_message: str
    assistant_message: str
    created_at: datetime

    def applies_to(self, scopes: set[str]) -> bool:
        """A turn in `domain:code/python` speaks about beliefs of domain:code/python,
        domain:code and user:universal."""
        return any(
            mine == theirs or mine.startswith(theirs + "/")
            for mine in (*self.scopes, UNIVERSAL)
            for theirs in scopes
        )


def recent_turns(
    store: BeliefStore, user_id: str, since: datetime | None, limit: int = MAX_TURNS
) -> list[RecentTurn]:
    """The user's turns since `since` (all when None), newest first."""
    return [
        RecentTurn(
            user_id=user_id,
            scopes=tuple(s.strip().lower() for s in turn.scopes),
            model=turn.model,
            user_message=strip_injected(turn.user_message),
            assistant_message=strip_injected(turn.assistant_message),
            created_at=created,
        )
        for turn, created in queued_turns(store, user_id, since, limit)
    ]


def latest_model(store: BeliefStore, user_id: str) -> str | None:
    """The model of the user's most recent turn (what extraction would use by default)."""
    turns = recent_turns(store, user_id, None, limit=1)
    return turns[0].model if turns and turns[0].model else None
