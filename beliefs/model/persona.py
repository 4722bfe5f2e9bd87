"""The persona prelude: a short second-person summary of a user's universal preferences."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from beliefs.model.models import utcnow

PersonaSource = Literal["operator", "generated", "deterministic"]


class Persona(BaseModel):
    """One per user; `inputs_hash` lets compaction skip regenerating an unchanged persona."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user_id: str = Field(min_length=1, max_length=200)
    text: str
    source: PersonaSource
    inputs_hash: str | None = None
    updated_at: datetime = Field(default_factory=utcnow)
