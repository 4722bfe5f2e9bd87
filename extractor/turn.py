"""The turn handed to the extractor: what was said, by whom, where, and what memory was shown."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from beliefs.model.models import utcnow


class PersonaRef(BaseModel):
    """The persona a request received: its user's persona at one version, and how many pinned
    beliefs it stood for (recorded as this reference, not as their ids)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str = Field(min_length=1)
    carries: int = Field(ge=0)


class Turn(BaseModel):
    """One completed exchange, as the proxy saw it after the response finished."""

    model_config = ConfigDict(extra="forbid")

    request_id: str = Field(min_length=1)
    user_id: str = Field(min_length=1)
    agent_id: str | None = None
    scopes: list[str] = Field(default_factory=list)
    model: str = Field(min_length=1)
    user_message: str = ""
    assistant_message: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    injected_ids: list[str] = Field(default_factory=list)  # the beliefs rendered in its prompt
    persona: PersonaRef | None = None  # older jobs listed the persona's beliefs in injected_ids
    created_at: datetime = Field(default_factory=utcnow)
    # The protocol the client spoke: an Anthropic turn is extracted by its model at the
    # Anthropic upstream.
    wire: Literal["openai", "anthropic"] = "openai"
