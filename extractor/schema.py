"""The extraction output the model must produce; Field descriptions are written for the model."""

from __future__ import annotations

import copy
import functools
import json
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
        "conversations. Reuse the canonical name of a known belief when the turn is about the "
        "same thing.",
    )
    content: str = Field(
        min_length=1,
        max_length=2000,
        description="The fact itself, in one or two plain sentences about this user.",
    )
    why_it_matters: str = Field(
        default="",
        max_length=600,
        description="One imperative sentence telling a future assistant what to do because of "
        "this belief, written for this belief only.",
    )
    aliases: list[str] = Field(
        default_factory=list,
        description="Other short names (1-2 words) the user might use for the same thing "
        "later: abbreviations, product names, nicknames. Only names of this subject.",
    )
    rejected_alternatives: list[str] = Field(
        default_factory=list,
        description="Names of the options the user ruled out (1-2 words each), as the user "
        "named them.",
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
        description="The id of a known open_question this belief settles, else null.",
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
    why_it_matters: str | None = Field(
        default=None,
        max_length=600,
        description="For superseded or contradicted: the new directive, one imperative sentence.",
    )
    rejected_alternatives: list[str] = Field(
        default_factory=list,
        description="For superseded: the names of the option just replaced.",
    )


class EntityUpdate(BaseModel):
    """New names the user used for a known belief."""

    model_config = ConfigDict(extra="forbid")

    canonical_name: str = Field(min_length=1, description="Canonical name of the known belief.")
    new_aliases: list[str] = Field(
        default_factory=list,
        description="Short names (1-2 words) the user just used for it that are not yet aliases.",
    )


class OpenQuestionResolution(BaseModel):
    """A known open question the turn settled, with the user's words that settle it."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, description="The id of the known open_question, copied exactly.")
    quote: str = Field(
        min_length=1,
        max_length=300,
        description="The user's words in this turn that settle it, quoted exactly.",
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
    "resolved_open_questions": OpenQuestionResolution,
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
    resolved_open_questions: list[OpenQuestionResolution] = Field(
        default_factory=list,
        description="Known open_question beliefs the user settled in this turn, each with its "
        "id and the user's words that settle it. Empty unless the turn clearly answers one.",
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


SchemaVariant = Literal["full", "light"]

# The wire schema's limits: what grammar-constrained decoders (llama.cpp turns the schema into a
# grammar) can compile. A `maxLength` above ~1000 makes its grammar explode; Pydantic still
# enforces the full rules on what comes back.
WIRE_MAX_LENGTH = 1000
WIRE_NAME_LENGTH = 80
WIRE_MAX_ITEMS: dict[str, int] = {
    "new_beliefs": 12,
    "belief_updates": 12,
    "entity_updates": 8,
    "resolved_open_questions": 5,
    "aliases": 10,
    "rejected_alternatives": 10,
    "new_aliases": 10,
    "scope": 4,
    "participants": 8,
}
DEFAULT_MAX_ITEMS = 20
# The light schema, for small models: without the fields they rarely fill well.
LIGHT_LEFT_OUT: dict[str, tuple[str, ...]] = {
    "NewBelief": (
        "scope",
        "epistemic_status",
        "memory_class",
        "participants",
        "resolves_open_question",
    ),
    "BeliefUpdate": ("new_canonical_name",),
    "ExtractionOutput": ("entity_updates",),
}


def wire_schema(
    model: type[BaseModel], *, variant: SchemaVariant = "full", bounded: bool = True
) -> dict[str, Any]:
    """The JSON schema sent to the model: strict form (every key required, no extra keys),
    lengths and counts bounded for grammar decoders unless `bounded` is False."""
    return copy.deepcopy(_wire_schema(model, variant, bounded))


def response_format(
    model: type[BaseModel], name: str, *, variant: SchemaVariant = "full", bounded: bool = True
) -> dict[str, Any]:
    """The OpenAI `response_format` for `model`, in the strict `json_schema` form."""
    schema = wire_schema(model, variant=variant, bounded=bounded)
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


@functools.cache
def _wire_schema(model: type[BaseModel], variant: SchemaVariant, bounded: bool) -> dict[str, Any]:
    # Generating the schema costs ~10 ms; it never changes for a model class.
    schema = copy.deepcopy(model.model_json_schema())
    if variant == "light":
        _lighten(schema, model.__name__)
    if bounded:
        _bound(schema, None)
    else:
        _unbound(schema)
    strict: dict[str, Any] = _strict(schema)
    return strict


def _lighten(schema: dict[str, Any], root: str) -> None:
    for name, fields in LIGHT_LEFT_OUT.items():
        node = schema if name == root else schema.get("$defs", {}).get(name)
        if not isinstance(node, dict):
            continue
        for key in fields:
            node.get("properties", {}).pop(key, None)
    used = json.dumps(schema.get("properties", {}))
    for name in list(schema.get("$defs", {})):
        # Drop definitions nothing refers to any more (e.g. EntityUpdate).
        refs = json.dumps({k: v for k, v in schema["$defs"].items() if k != name}) + used
        if f"#/$defs/{name}" not in refs:
            del schema["$defs"][name]


def _bound(node: Any, key: str | None) -> None:
    if isinstance(node, dict):
        if node.get("type") == "string":
            limit = WIRE_NAME_LENGTH if key == "item" else WIRE_MAX_LENGTH
            node["maxLength"] = min(int(node.get("maxLength", limit)), limit)
            if key == "item" or key in ("canonical_name", "id"):
                node["minLength"] = max(1, int(node.get("minLength", 1)))
        if node.get("type") == "array" and key is not None:
            node.setdefault("maxItems", WIRE_MAX_ITEMS.get(key, DEFAULT_MAX_ITEMS))
        for child_key, value in node.items():
            if child_key == "properties" and isinstance(value, dict):
                for name, prop in value.items():
                    _bound(prop, name)
            elif child_key == "items":
                _bound(value, "item")
            elif child_key == "anyOf" and isinstance(value, list):
                for option in value:
                    _bound(option, key)
            elif child_key == "$defs" and isinstance(value, dict):
                for definition in value.values():
                    _bound(definition, None)


def _unbound(node: Any) -> None:
    if isinstance(node, dict):
        for limit in ("maxLength", "minLength", "maxItems", "minItems"):
            node.pop(limit, None)
        for value in node.values():
            _unbound(value)
    elif isinstance(node, list):
        for value in node:
            _unbound(value)


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
