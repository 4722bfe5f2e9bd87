"""A belief as a language model is shown it: the fields a prompt asks for, in its order, as
plain JSON values; the extractor's and compaction's prompts both use it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from beliefs.model.record import AnyBelief

ViewField = Literal[
    "id",
    "type",
    "canonical_name",
    "aliases",
    "content",
    "why_it_matters",
    "status",
    "rejected_alternatives",
    "scope",
]
_VALUES: dict[str, Callable[[AnyBelief], Any]] = {
    "id": lambda b: b.id,
    "type": lambda b: b.type,
    "canonical_name": lambda b: b.canonical_name,
    "aliases": lambda b: list(b.aliases),
    "content": lambda b: b.content,
    "why_it_matters": lambda b: b.why_it_matters,
    "status": lambda b: b.epistemic_status,
    "rejected_alternatives": lambda b: list(b.rejected_alternatives),
    "scope": lambda b: list(b.scope),
}
_UNSET: dict[str, Any] = {"aliases": [], "rejected_alternatives": [], "status": "active"}


def model_view(
    belief: AnyBelief, fields: Sequence[ViewField], *, when_set: Sequence[ViewField] = ()
) -> dict[str, Any]:
    """`fields` of the belief, in that order; those in `when_set` are left out at their
    unset value (no aliases, no rejected alternatives, status active)."""
    view: dict[str, Any] = {}
    for name in fields:
        value = _VALUES[name](belief)
        if name in when_set and value == _UNSET.get(name):
            continue
        view[name] = value
    return view
