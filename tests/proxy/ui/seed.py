"""Beliefs for the UI tests: a chain, a pinned one, an agent's pending one, and hostile text."""

from __future__ import annotations

from beliefs.model.models import Belief
from tests.proxy.beliefs_seed import POSTGRES, USER

KUBERNETES = Belief(
    id="b-k8s",
    user_id=USER,
    type="entity",
    canonical_name="kubernetes",
    aliases=["k8s", "kube"],
    content="Deploys run on a managed Kubernetes cluster.",
    why_it_matters="Give deployment steps as kubectl and Helm commands.",
    scope=["domain:code"],
    pinned=True,
)
TABS = Belief(
    id="b-tabs",
    user_id=USER,
    canonical_name="tabs_indentation",
    aliases=["tabs"],
    content="Indents code with tabs.",
    why_it_matters="Indent every code example with tabs.",
    scope=["user:universal"],
)
GUESS = Belief(
    id="b-guess",
    user_id=USER,
    canonical_name="prefers_fastify",
    aliases=["fastify"],
    content="Seems to prefer Fastify over Express.",
    why_it_matters="Suggest Fastify for new HTTP services.",
    scope=["domain:code"],
    epistemic_status="inferred",
    review_state="pending",
    source_type="extracted",
    confidence=0.6,
)
HOSTILE = Belief(
    id="b-hostile",
    user_id=USER,
    canonical_name="hostile_markup",
    aliases=["<b>bold</b>"],
    content="<script>alert('owned')</script> is what the page must show as text",
    why_it_matters='"><img src=x onerror=alert(1)>',
    scope=["domain:writing"],
)
BOB = Belief(
    id="b-bob",
    user_id="bob",
    canonical_name="postgres",
    aliases=["pg"],
    content="Bob uses SQLite, not Postgres.",
    scope=["domain:code"],
    agent_id="cline",
)
ALL = [POSTGRES, KUBERNETES, TABS, GUESS, HOSTILE, BOB]
POSTGRES_17 = Belief(
    id="b-postgres-17",
    user_id=USER,
    type="decision",
    canonical_name="postgres_17",
    aliases=["pg", "postgresql", "postgres"],
    rejected_alternatives=["mysql"],
    content="Billing moved to PostgreSQL 17.",
    why_it_matters="Write SQL for PostgreSQL 17.",
    scope=["domain:code"],
)
