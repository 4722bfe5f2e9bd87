"""What a prompt shows a model of a belief: the fields asked for, in order, the optional ones
only when set."""

from __future__ import annotations

from beliefs.model.model_view import model_view
from beliefs.model.models import Belief

FIELDS = ("id", "canonical_name", "aliases", "status", "rejected_alternatives", "scope")


def test_fields_come_in_the_order_asked_and_optional_ones_only_when_set() -> None:
    plain = Belief(id="b-1", user_id="u", canonical_name="postgres", content="Uses PG 16.")
    view = model_view(plain, FIELDS, when_set=("aliases", "status", "rejected_alternatives"))
    assert view == {"id": "b-1", "canonical_name": "postgres", "scope": ["user:universal"]}
    assert list(model_view(plain, FIELDS)) == list(FIELDS)
    assert model_view(plain, FIELDS)["status"] == "active"


def test_set_optional_fields_are_shown() -> None:
    belief = Belief(
        id="b-2",
        user_id="u",
        canonical_name="postgres",
        content="Uses PG 16.",
        aliases=["pg"],
        rejected_alternatives=["mysql"],
        epistemic_status="inferred",
        scope=["domain:code"],
    )
    view = model_view(belief, FIELDS, when_set=("aliases", "status", "rejected_alternatives"))
    assert view == {
        "id": "b-2",
        "canonical_name": "postgres",
        "aliases": ["pg"],
        "status": "inferred",
        "rejected_alternatives": ["mysql"],
        "scope": ["domain:code"],
    }
