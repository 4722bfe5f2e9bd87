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

    # The descriptions are the model's field guide (in the JSON schema, or the outline the
    # prompt carries in the modes without one): every call pays for them, so each is terse and
    # says only what the field's name and type do not.
    type: NewBeliefType = Field(
        description="preference: how they like things done; entity: a project, tool or person; "
        "decision: a choice made; relation: links beliefs; open_question: still undecided"
    )
    canonical_name: str = Field(
        min_length=1,
        max_length=120,
        description="short snake_case subject",
    )
    content: str = Field(min_length=1, max_length=2000, description="the fact, 1-2 sentences")
    why_it_matters: str = Field(
        default="",
        max_length=600,
        description="one imperative sentence for a future assistant",
    )
    aliases: list[str] = Field(
        default_factory=list,
        description="1-2 word names the user may use for it later",
    )
    rejected_alternatives: list[str] = Field(
        default_factory=list, description="options the user ruled out, as named"
    )
    scope: list[str] = Field(
        default_factory=list,
        description="empty = the turn's scopes; 'user:universal' for the person's general ways",
    )
    confidence: float = Field(
        ge=0.0, le=1.0, description="0.9 stated, 0.6 implied, below 0.35 a guess (dropped)"
    )
    epistemic_status: NewStatus = Field(
        default="active", description="inferred: from behaviour; exploratory: undecided"
    )
    memory_class: str | None = Field(default=None)
    participants: list[str] = Field(
        default_factory=list, description="relation only: canonical names it links"
    )
    resolves_open_question: str | None = Field(
        default=None, description="id of a known open_question this settles"
    )


class BeliefUpdate(BaseModel):
    """A change to a belief listed under known beliefs."""

    model_config = ConfigDict(extra="forbid")

    belief_id: str | None = Field(default=None, description="the known belief's id, exactly")
    canonical_name: str | None = Field(default=None, description="the known belief's name")
    change: Change = Field(
        description="reinforced: said again; enriched: more detail; superseded: the user "
        "replaced it; contradicted: conflicts, unclear which holds"
    )
    new_content: str | None = Field(
        default=None,
        max_length=2000,
        description="the content as it should now read (not for reinforced)",
    )
    new_canonical_name: str | None = Field(
        default=None, max_length=120, description="superseded: new name if the subject changed"
    )
    reason: str | None = Field(default=None, max_length=500, description="a few quoted words")
    why_it_matters: str | None = Field(
        default=None,
        max_length=600,
        description="superseded, contradicted: the new directive, one imperative sentence",
    )
    rejected_alternatives: list[str] = Field(
        default_factory=list, description="superseded: the option just replaced"
    )


class EntityUpdate(BaseModel):
    """New names the user used for a known belief."""

    model_config = ConfigDict(extra="forbid")

    canonical_name: str = Field(min_length=1, description="the known belief's name")
    new_aliases: list[str] = Field(
        default_factory=list, description="1-2 word names the user just used for it"
    )


class OpenQuestionResolution(BaseModel):
    """A known open question the turn settled, with the user's words that settle it."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, description="the known open_question's id, exactly")
    quote: str = Field(
        min_length=1, max_length=300, description="the user's words that settle it, exactly"
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
        default_factory=list, description="durable things no known belief covers"
    )
    belief_updates: list[BeliefUpdate] = Field(default_factory=list)
    entity_updates: list[EntityUpdate] = Field(default_factory=list)
    resolved_open_questions: list[OpenQuestionResolution] = Field(
        default_factory=list, description="only when the turn clearly settles one"
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


def outline(schema: dict[str, Any]) -> str:
    """A compact outline of a wire schema, for the modes that carry the schema in the prompt:
    one line per field with its type and description, a third of the JSON schema's tokens."""
    lines: list[str] = []
    _outline_object(schema, schema.get("$defs", {}), 0, lines)
    return "\n".join(lines)


def _outline_object(
    node: dict[str, Any], defs: dict[str, Any], depth: int, lines: list[str]
) -> None:
    for name, prop in node.get("properties", {}).items():
        kind, inner = _outline_type(prop, defs)
        note = prop.get("description") or (inner or {}).get("description")
        head = f"{'  ' * depth}{name}: {kind}"
        lines.append(f"{head}  # {note}" if note and not inner else head)
        if inner is not None:
            _outline_object(inner, defs, depth + 1, lines)


def _outline_type(prop: dict[str, Any], defs: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """The type's words, and the object to outline beneath it (a list of objects)."""
    if "$ref" in prop:
        target = defs[prop["$ref"].rsplit("/", 1)[-1]]
        return "object", target
    if "enum" in prop:
        return "|".join(str(v) for v in prop["enum"]), None
    if "anyOf" in prop:
        kinds = [_outline_type(option, defs)[0] for option in prop["anyOf"]]
        return " or ".join(kinds), None
    if prop.get("type") == "array":
        kind, inner = _outline_type(prop.get("items", {}), defs)
        if inner is not None:
            return "list of objects, each:", inner
        return f"list of {kind}s", None
    return str(prop.get("type", "any")), None
