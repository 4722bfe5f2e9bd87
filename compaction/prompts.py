"""Prompts and response models for compaction's model calls; Field descriptions are for the LLM."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from beliefs.model.model_view import ViewField, model_view
from beliefs.model.models import Belief
from beliefs.model.record import AnyBelief

MAX_TURN_CHARS = 600
MAX_TURNS = 6


class MergeProposal(BaseModel):
    """Beliefs that say the same thing and should become one."""

    model_config = ConfigDict(extra="forbid")

    belief_ids: list[str] = Field(
        description="Ids (copied exactly) of two or more listed beliefs that are duplicates or "
        "say the same thing in different words."
    )
    canonical_name: str = Field(
        description="snake_case name for the merged belief; usually the clearest existing name."
    )
    content: str = Field(
        description="The merged fact in one or two plain sentences, keeping every detail the "
        "sources agree on."
    )
    why_it_matters: str = Field(
        description="One imperative sentence telling an assistant what to do because of it."
    )
    reason: str = Field(description="Why these are the same, in a few words.")


class ContradictionProposal(BaseModel):
    """Two beliefs that cannot both be true."""

    model_config = ConfigDict(extra="forbid")

    belief_ids: list[str] = Field(description="Exactly two ids of listed beliefs that conflict.")
    reason: str = Field(description="What they disagree about, in a few words.")


class AliasProposal(BaseModel):
    """A name the user used for a belief that is not yet one of its names."""

    model_config = ConfigDict(extra="forbid")

    belief_id: str = Field(description="Id of the listed belief the user was talking about.")
    aliases: list[str] = Field(
        description="Short names (1-4 words) exactly as the user wrote them in a listed user "
        "message, e.g. 'the cluster thing'. Only names that appear in a user message."
    )
    evidence: str = Field(description="The user's words that show the name means this belief.")


class ClusterReview(BaseModel):
    """What to do with a group of related beliefs. Empty lists when nothing should change."""

    model_config = ConfigDict(extra="forbid")

    merges: list[MergeProposal] = Field(
        default_factory=list,
        description="Groups of duplicates to merge. Do not merge beliefs that merely relate.",
    )
    contradictions: list[ContradictionProposal] = Field(
        default_factory=list,
        description="Pairs that contradict each other (e.g. two different choices for the "
        "same thing). They are flagged for a human, never resolved by you.",
    )
    aliases: list[AliasProposal] = Field(
        default_factory=list,
        description="New names the user used for a belief in the recent messages.",
    )


SYSTEM = (
    "You maintain a user's long-term memory: beliefs an assistant learned about the user. "
    "You are shown a group of beliefs that share names, and recent messages from the user. "
    "Be conservative: merge only beliefs that say the same thing, flag a contradiction only "
    "when both cannot hold, and add an alias only when the user clearly used that name for "
    "the belief. When in doubt, leave things as they are and return empty lists. Reply with "
    "one JSON object matching the schema, nothing else."
)


VIEW: tuple[ViewField, ...] = (
    "id",
    "type",
    "canonical_name",
    "aliases",
    "content",
    "why_it_matters",
    "status",
    "rejected_alternatives",
)


def belief_view(belief: AnyBelief) -> dict[str, Any]:
    return model_view(belief, VIEW, when_set=("rejected_alternatives",))


def build_messages(beliefs: Sequence[Belief], user_messages: Sequence[str]) -> list[dict[str, str]]:
    """The review request for one cluster; `user_messages` are recent turns naming it."""
    parts = ["Beliefs:", json.dumps([belief_view(b) for b in beliefs], ensure_ascii=False)]
    if user_messages:
        parts.append("Recent messages from the user that mention these beliefs:")
        for text in user_messages[:MAX_TURNS]:
            parts.append(f"- {json.dumps(text[:MAX_TURN_CHARS], ensure_ascii=False)}")
    else:
        parts.append("No recent messages mention these beliefs: return an empty aliases list.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(parts)}]


class PersonaReply(BaseModel):
    """The persona prelude."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(
        min_length=200,
        max_length=400,
        description="200 to 400 characters of plain prose in the second person ('You prefer "
        "...') summarising how the user likes to work. Say 'tends to' for inferred beliefs, "
        "state prohibitions as 'never ...', and leave out anything not settled.",
    )


PERSONA_SYSTEM = (
    "You write the short prelude an assistant reads before every answer to a user: who the "
    "user is and how they like to work, from the beliefs listed. Second person, plain prose, "
    "no lists, no names of tools the beliefs do not mention, 200 to 400 characters. Every "
    "pinned belief must come through: the prelude is the only place it reaches the assistant. "
    "Reply with one JSON object matching the schema, nothing else."
)


def build_persona_messages(beliefs: Sequence[AnyBelief]) -> list[dict[str, str]]:
    views = [
        {
            "content": b.content,
            "why_it_matters": b.why_it_matters,
            "status": b.epistemic_status,
            "kind": b.subtype or b.type,
            "pinned": b.pinned or b.delivery == "always",
        }
        for b in beliefs
    ]
    return [
        {"role": "system", "content": PERSONA_SYSTEM},
        {"role": "user", "content": "Beliefs:\n" + json.dumps(views, ensure_ascii=False)},
    ]
