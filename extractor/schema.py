"""The extraction output the model must produce; Field descriptions are written for the model."""

from __future__ import annotations

import copy
import functools
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    model_validator,
)

NewBeliefType = Literal["preference", "entity", "decision", "relation", "open_question"]
NewStatus = Literal["active", "inferred", "exploratory"]
Change = Literal["reinforced", "contradicted", "superseded", "enriched"]


class NewBelief(BaseModel):
    """Something durable the user told or showed: worth remembering in future conversations."""

    model_config = ConfigDict(extra="forbid")

    type: NewBeliefType = Field(
        description="preference (how the user likes things done), entity (a thing in their "
        "world: a project, tool, person), decision (a choice they made, often with rejected "
        "options), relation (links between named beliefs, see participants), open_question "
        "(something still undecided they will come back to)."
    )
    canonical_name: str = Field(
        min_length=1,
        max_length=120,
        description="Short snake_case name for what the belief is about, stable across "
        "conversations, e.g. 'database_driver', 'code_style_typescript'. Reuse the canonical "
        "name of a known belief when the turn is about the same thing.",
    )
    content: str = Field(
        min_length=1,
        max_length=2000,
        description="The fact itself, one or two plain sentences, e.g. 'Uses the raw MongoDB "
        "driver, not Mongoose.'",
    )
    why_it_matters: str = Field(
        default="",
        max_length=600,
        description="One imperative sentence telling a future assistant what to do because of "
        "this belief, e.g. 'Write data access with the raw MongoDB driver; never suggest "
        "Mongoose schemas.'",
    )
    aliases: list[str] = Field(
        default_factory=list,
        description="Other short names (1-2 words) the user might use for this later: "
        "abbreviations, product names, nicknames, e.g. ['k8s', 'kube'].",
    )
    rejected_alternatives: list[str] = Field(
        default_factory=list,
        description="Names of options the user ruled out (1-2 words each), e.g. ['mongoose'].",
    )
    scope: list[str] = Field(
        default_factory=list,
        description="Where this belief applies: the turn's scopes, or 'user:universal' for "
        "something true everywhere (personal style, general preferences). Empty = the turn's "
        "scopes.",
    )
    confidence: float = Field(
        ge=0.0,
        le=1.0,
        description="0-1: how sure you are the user holds this durably. Stated outright: 0.9; "
        "implied: 0.6; a guess: below 0.35 (it will be dropped).",
    )
    epistemic_status: NewStatus = Field(
        default="active",
        description="active (stated), inferred (you concluded it from behaviour), exploratory "
        "(being considered, not decided).",
    )
    memory_class: str | None = Field(
        default=None,
        description="episodic, semantic, procedural, working, document, or null.",
    )
    participants: list[str] = Field(
        default_factory=list,
        description="For type relation only: the canonical names of the beliefs it links.",
    )
    resolves_open_question: str | None = Field(
        default=None,
        description="The id or canonical name of a known open_question this belief settles, "
        "else null.",
    )


class BeliefUpdate(BaseModel):
    """A change to a belief listed under known beliefs."""

    model_config = ConfigDict(extra="forbid")

    belief_id: str | None = Field(
        default=None, description="The id of the known belief, copied exactly; null if unsure."
    )
    canonical_name: str | None = Field(
        default=None, description="The canonical name of the known belief (always give it)."
    )
    change: Change = Field(
        description="reinforced (the turn confirms it again), contradicted (the turn says "
        "something incompatible and it is unclear which holds), superseded (the user clearly "
        "replaced it: give new_content), enriched (adds detail without changing it)."
    )
    new_content: str | None = Field(
        default=None,
        max_length=2000,
        description="For superseded, contradicted and enriched: the belief's content as it "
        "should now read; else null.",
    )
    new_canonical_name: str | None = Field(
        default=None,
        max_length=120,
        description="For superseded: a new snake_case name if the subject itself changed; "
        "else null.",
    )
    reason: str | None = Field(
        default=None, max_length=500, description="Why, in a few words, quoting the turn."
    )


class EntityUpdate(BaseModel):
    """New names the user used for a known belief."""

    model_config = ConfigDict(extra="forbid")

    canonical_name: str = Field(min_length=1, description="Canonical name of the known belief.")
    new_aliases: list[str] = Field(
        default_factory=list,
        description="Short names (1-2 words) the user just used for it that are not yet aliases.",
    )


class Skipped(BaseModel):
    """An item of the model's output that was not used, and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    item: str
    reason: str


_ITEM_MODELS: dict[str, type[BaseModel]] = {
    "new_beliefs": NewBelief,
    "belief_updates": BeliefUpdate,
    "entity_updates": EntityUpdate,
}


class ExtractionOutput(BaseModel):
    """Everything worth remembering from one turn. Empty lists when there is nothing."""

    model_config = ConfigDict(extra="forbid")

    new_beliefs: list[NewBelief] = Field(
        default_factory=list, description="Durable things not covered by a known belief."
    )
    belief_updates: list[BeliefUpdate] = Field(
        default_factory=list, description="Changes to known beliefs."
    )
    entity_updates: list[EntityUpdate] = Field(
        default_factory=list, description="New aliases for known beliefs."
    )
    resolved_open_questions: list[str] = Field(
        default_factory=list,
        description="Ids or canonical names of known open_question beliefs the turn settled.",
    )

    _skipped: list[Skipped] = PrivateAttr(default_factory=list)

    @property
    def skipped(self) -> list[Skipped]:
        """Items dropped because they did not validate; the rest of the output stands."""
        return list(self._skipped)

    @model_validator(mode="wrap")
    @classmethod
    def _skip_invalid_items(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        # One malformed belief must not cost the whole turn: drop it with its reason and keep
        # the others. A malformed envelope still fails (and is re-asked).
        if not isinstance(data, dict):
            return handler(data)
        kept = dict(data)
        skipped: list[Skipped] = []
        for key, model in _ITEM_MODELS.items():
            items = data.get(key)
            if not isinstance(items, list):
                continue
            good: list[Any] = []
            for n, item in enumerate(items):
                try:
                    good.append(model.model_validate(item))
                except ValidationError as exc:
                    skipped.append(Skipped(item=f"{key}[{n}] {_label(item)}", reason=_brief(exc)))
            kept[key] = good
        out = handler(kept)
        if isinstance(out, ExtractionOutput):
            out._skipped = skipped
        return out


def _label(item: Any) -> str:
    if isinstance(item, dict):
        name = item.get("canonical_name") or item.get("belief_id")
        if isinstance(name, str):
            return repr(name[:80])
    return ""


def _brief(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err["loc"]) or "item"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def response_format(model: type[BaseModel], name: str) -> dict[str, Any]:
    """The OpenAI `response_format` for `model`, in the strict form (every key required)."""
    return copy.deepcopy(_response_format(model, name))


@functools.cache
def _response_format(model: type[BaseModel], name: str) -> dict[str, Any]:
    # Generating the schema costs ~10 ms; it never changes for a model class.
    schema = _strict(copy.deepcopy(model.model_json_schema()))
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": schema, "strict": True},
    }


def _strict(node: Any) -> Any:
    if isinstance(node, dict):
        node.pop("default", None)
        node.pop("title", None)
        for value in node.values():
            _strict(value)
        if node.get("type") == "object" and isinstance(node.get("properties"), dict):
            node["required"] = list(node["properties"])
            node["additionalProperties"] = False
    elif isinstance(node, list):
        for value in node:
            _strict(value)
    return node
