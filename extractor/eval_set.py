"""The conversation set `tenure eval-extract` replays: conversations, their gold and what is
scored after each one."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from beliefs.model.errors import BeliefError


class Probe(BaseModel):
    """After the conversation, `query` must retrieve a belief that says every term of `says`
    (a term may list alternatives with `|`) and none that says a term of `not_says`.

    The terms are the belief's meaning in other words than the user's: a model that copies the
    turn cannot meet them (the shipped set's test checks that no term is in the turn's text).
    """

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1)
    says: list[str] = Field(min_length=1)
    not_says: list[str] = Field(default_factory=list)


class Rejection(BaseModel):
    """An option the user ruled out, and the one they kept (which must not be rejected)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    chosen: str = Field(min_length=1)


class Supersession(BaseModel):
    """A correction: a belief saying `old` must end superseded, its chain's live head saying
    `new`; superseding any other belief of the conversation is wrong."""

    model_config = ConfigDict(extra="forbid")

    old: list[str] = Field(min_length=1)
    new: list[str] = Field(min_length=1)


class OpenQuestion(BaseModel):
    """An open question a belief must record (type open_question, saying `says`), settled or
    still open as `settled` says."""

    model_config = ConfigDict(extra="forbid")

    says: list[str] = Field(min_length=1)
    settled: bool = False


class EvalTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user: str = Field(min_length=1)
    assistant: str = ""
    gold: list[dict[str, Any]] = Field(default_factory=list)  # for the reference model only


class Conversation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    persona: str
    kinds: list[str] = Field(default_factory=list)
    scopes: list[str] = Field(default_factory=list)
    turns: list[EvalTurn] = Field(min_length=1)
    probes: list[Probe] = Field(default_factory=list)
    rejected: list[Rejection] = Field(default_factory=list)
    supersessions: list[Supersession] = Field(default_factory=list)
    questions: list[OpenQuestion] = Field(default_factory=list)
    chit_chat: bool = False

    @property
    def user_id(self) -> str:
        return f"eval-{self.id}"


class ConversationSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    about: str = ""
    conversations: list[Conversation] = Field(min_length=1)


def load_conversations(path: str | Path | None = None) -> list[Conversation]:
    """The shipped set, or a file of the same shape.

    Raises:
        BeliefError: the file is missing, not JSON, or not a conversation set (names the fault).
    """
    where = str(path) if path is not None else "the shipped conversation set"
    try:
        if path is None:
            text = (
                resources.files("extractor")
                .joinpath("data/conversations.json")
                .read_text(encoding="utf-8")
            )
        else:
            text = Path(path).read_text(encoding="utf-8")
        data = ConversationSet.model_validate_json(text)
    except FileNotFoundError:
        raise BeliefError(f"conversation file {where} does not exist") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        at = ".".join(str(p) for p in first["loc"])
        raise BeliefError(
            f"{where} is not a conversation set: {at}: {first['msg']} (see the shipped "
            "set's shape in docs/extraction-models.md)"
        ) from None
    ids = [c.id for c in data.conversations]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise BeliefError(f"{where}: conversation id {twice[0]!r} is used twice")
    return data.conversations
