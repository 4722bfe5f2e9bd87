"""The memory tools' inputs: one Pydantic model per tool, its Field descriptions written for the
model that calls it, and the tool list the MCP endpoint advertises."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ToolName = Literal["recall", "remember", "forget", "beliefs", "open_questions", "sources"]

_SCOPE = (
    "Where to look or write: user:universal, domain:<slug>[/<sub>] or project:<slug> "
    "(e.g. domain:code, project:billing). Omit it to use the connection's scopes."
)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class RecallArgs(_Args):
    """Look up what is remembered about something, including beliefs that are never injected
    automatically (on_demand). Search matches names and aliases, so use the short names a
    person would use ('postgres', 'k8s', 'code style'), not a whole question."""

    query: str = Field(
        min_length=1,
        max_length=1000,
        description="The words to look for: names, tools, topics (e.g. 'database driver').",
    )
    scope: str | None = Field(default=None, description=_SCOPE)
    limit: int = Field(default=10, ge=1, le=50, description="At most this many hits (1-50).")


class RememberArgs(_Args):
    """Record something the user stated or decided, so it is known in future conversations.
    Remembering the same statement again strengthens it; a different statement under an
    existing name opens a conflict for the user to settle; give `replaces` to supersede."""

    statement: str = Field(
        min_length=1,
        max_length=2000,
        description="The fact or decision in one or two plain sentences, e.g. 'Uses the raw "
        "MongoDB driver, not Mongoose.'",
    )
    why_it_matters: str = Field(
        default="",
        max_length=600,
        description="One imperative sentence telling a future assistant what to do because of "
        "it, e.g. 'Write data access with the raw driver; never suggest Mongoose schemas.'",
    )
    scope: str | None = Field(default=None, description=_SCOPE)
    type: Literal["preference", "entity", "decision", "relation", "open_question"] = Field(
        default="preference",
        description="preference (how the user likes things done), entity (a thing in their "
        "world), decision (a choice made, often with rejected options), relation, or "
        "open_question (still undecided).",
    )
    name: str | None = Field(
        default=None,
        max_length=120,
        description="A short snake_case name for what it is about, e.g. 'database_driver'. "
        "Reuse the name `recall` showed to speak about the same thing.",
    )
    aliases: list[str] = Field(
        default_factory=list,
        max_length=25,
        description="Short names (1-2 words) someone would use when this matters again, e.g. "
        "['mongodb', 'driver']. Only names and aliases are searched, so give a few.",
    )
    rejected_alternatives: list[str] = Field(
        default_factory=list,
        max_length=25,
        description="Options the user ruled out (1-2 words each), e.g. ['mongoose'].",
    )
    replaces: str | None = Field(
        default=None,
        max_length=200,
        description="The id or name of a remembered belief this statement replaces; it is "
        "kept in history as superseded.",
    )
    pinned: bool = Field(
        default=False,
        description="True only when the user asks for this to be in view on every turn (a "
        "standing instruction): it is then delivered on every turn in its scope. The user may "
        "require confirming such writes; the answer then says how.",
    )


class ForgetArgs(_Args):
    """Stop using a remembered belief the user says is wrong or no longer wanted. A soft
    delete, reversible: it is rejected (never injected again, kept in history, restorable by
    the user), not erased."""

    id: str | None = Field(
        default=None, max_length=200, description="The belief's id, as recall showed it."
    )
    canonical_name: str | None = Field(
        default=None, max_length=200, description="Or the belief's name, as recall showed it."
    )
    reason: str = Field(
        min_length=1,
        max_length=500,
        description="Why, in the user's words; recorded in the belief's history.",
    )

    @model_validator(mode="after")
    def _one_target(self) -> ForgetArgs:
        if bool(self.id) == bool(self.canonical_name):
            raise ValueError("give exactly one of id or canonical_name")
        return self


class BeliefsArgs(_Args):
    """List the remembered beliefs of a scope (newest first), with their ids and names."""

    scope: str | None = Field(default=None, description=_SCOPE)
    limit: int = Field(default=50, ge=1, le=200, description="At most this many (1-200).")


class OpenQuestionsArgs(_Args):
    """List the questions the user left open (undecided matters to come back to)."""

    scope: str | None = Field(default=None, description=_SCOPE)


class SourcesArgs(_Args):
    """List the user's documents (ingested files) in a scope: each file with its passages and
    last ingest. `recall` finds their passages; cite them as the answer shows."""

    scope: str | None = Field(default=None, description=_SCOPE)


ARGS: dict[ToolName, type[_Args]] = {
    "recall": RecallArgs,
    "remember": RememberArgs,
    "forget": ForgetArgs,
    "beliefs": BeliefsArgs,
    "open_questions": OpenQuestionsArgs,
    "sources": SourcesArgs,
}
READ_ONLY: frozenset[ToolName] = frozenset({"recall", "beliefs", "open_questions", "sources"})


def input_schema(name: ToolName) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments (titles dropped: they only repeat the names)."""
    schema = ARGS[name].model_json_schema()
    schema.pop("title", None)
    schema.pop("description", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def description(name: ToolName) -> str:
    return " ".join((ARGS[name].__doc__ or "").split())
