"""A small, readable set of beliefs for the gateway tests."""

from __future__ import annotations

from beliefs.model.models import Belief

USER = "alice"

POSTGRES = Belief(
    id="b-postgres",
    user_id=USER,
    type="decision",
    canonical_name="postgres",
    aliases=["pg", "postgresql"],
    rejected_alternatives=["mysql"],
    content="The billing service stores everything in PostgreSQL 16.",
    why_it_matters="Write SQL for PostgreSQL 16; never suggest MySQL.",
    scope=["domain:code"],
)
TABS = Belief(
    id="b-tabs",
    user_id=USER,
    canonical_name="tabs_indentation",
    aliases=["tabs"],
    content="Indents code with tabs.",
    why_it_matters="Indent every code example with tabs.",
    scope=["domain:code"],
    pinned=True,
)
NOVEL = Belief(
    id="b-novel",
    user_id=USER,
    canonical_name="novel_title",
    aliases=["novel"],
    content="The novel is called The Long Tide.",
    scope=["domain:writing"],
)
BOB = Belief(
    id="b-bob",
    user_id="bob",
    canonical_name="postgres",
    aliases=["pg"],
    content="Bob uses SQLite, not Postgres.",
    scope=["domain:code"],
)
ALL = [POSTGRES, TABS, NOVEL, BOB]
PERSONA = "You prefer short answers."
