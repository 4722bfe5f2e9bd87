"""End to end: a correction through the real gateway changes what every later request receives."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from beliefs.model.models import Belief
from beliefs.store.belief_store import BeliefStore
from beliefs.store.conflicts import record_conflict
from tests.extractor.fake_llm import extraction, new_belief, update
from tests.fakes.upstream import Chat, FakeUpstream
from tests.proxy.conftest import Gateway
from tests.proxy.gateway.test_clients import (
    BELIEFS,
    CORPUS,
    USER,
    provider_copies,
    recorded,
    replay,
)
from tests.proxy.gateway.test_extraction import (
    OTHER_BELIEFS,
    chat,
    extraction_reply,
    is_chat,
    is_extraction,
    live,
    wait_jobs,
)

OLD_DIRECTIVE = "Design schemas and queries for PostgreSQL 16."
NEW_DIRECTIVE = "Design schemas and queries for CockroachDB 24."


def postgres() -> Belief:
    return Belief(
        user_id="alice",
        type="decision",
        canonical_name="primary_database",
        content="The team's primary database is PostgreSQL 16.",
        why_it_matters=OLD_DIRECTIVE,
        aliases=["postgresql", "postgres", "pg"],
        scope=["project:billing"],
    )


def forwarded(upstream: FakeUpstream) -> str:
    request: dict[str, Any] = next(r for r in reversed(upstream.requests) if is_chat(r)).json
    return json.dumps(request["messages"])


def superseding(old: Belief, content: str, **kwargs: Any) -> Chat:
    """The extraction reply that supersedes `old` with `content`."""
    up = update(
        "superseded",
        belief_id=old.id,
        canonical_name=old.canonical_name,
        new_content=content,
        **kwargs,
    )
    return extraction_reply(extraction(belief_updates=[up]))


def test_a_correction_leaves_one_belief_stating_the_new_choice(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    old = postgres()
    gateway = make_gateway(beliefs=[old, *OTHER_BELIEFS], extract_workers=1)
    # The model replies as the report saw: a supersession with no directive and no names.
    upstream.queue(superseding(old, "The team's primary database is CockroachDB 24."))
    chat(gateway, "We switched from PostgreSQL to CockroachDB 24 for the primary database.")
    wait_jobs(gateway, 1)
    [head] = [b for b in live(gateway) if b.canonical_name == "primary_database"]
    assert head.rejected_alternatives == ["postgresql", "postgres", "pg"]
    # The old directive, naming PostgreSQL, is rewritten for the swap the content made.
    # The new option is named: a turn that names only CockroachDB finds the belief.
    assert head.aliases == ["CockroachDB"] and head.why_it_matters == NEW_DIRECTIVE

    upstream.queue(extraction_reply(extraction()))
    chat(gateway, "How should I design the primary database schema for invoices?")
    sent = forwarded(upstream)
    assert "The team's primary database is CockroachDB 24." in sent
    assert "[ruled out: postgresql, postgres, pg]" in sent
    assert f"| Why it matters: {NEW_DIRECTIVE}" in sent
    assert OLD_DIRECTIVE not in sent and "[also called: CockroachDB]" in sent

    upstream.queue(extraction_reply(extraction()))
    chat(gateway, "Does cockroachdb need a special driver for the invoices service?")
    assert "The team's primary database is CockroachDB 24." in forwarded(upstream)


COCKROACH = "Billing's primary database is CockroachDB 24."
HEADS_UP = "Heads up: billing now runs on CockroachDB 24 for everything."


def extraction_prompts(upstream: FakeUpstream) -> list[str]:
    """The turn part (last message) of every extraction call, in order."""
    return [str(r.json["messages"][-1]["content"]) for r in upstream.requests if is_extraction(r)]


def test_a_correction_that_never_names_the_old_belief_still_replaces_it(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    old = postgres()
    gateway = make_gateway(beliefs=[old, *OTHER_BELIEFS], extract_workers=1)
    # Shown no known belief, the model proposes a new one of the same name; shown the old one
    # (a second look, because the proposal points at it), it supersedes it.
    proposal = new_belief("primary_database", COCKROACH, rejected_alternatives=["PostgreSQL"])
    upstream.queue(
        extraction_reply(extraction(new_beliefs=[proposal])),
        superseding(old, COCKROACH, why_it_matters="Design schemas for CockroachDB 24."),
    )
    chat(gateway, HEADS_UP)
    [job] = wait_jobs(gateway, 1)
    first, second = extraction_prompts(upstream)
    assert "Known beliefs (JSON lines):\n(none)" in first
    assert old.id in second and "PostgreSQL 16" in second
    [head] = [b for b in live(gateway) if b.canonical_name == "primary_database"]
    assert head.content == COCKROACH and head.id in job["written_ids"]
    assert "postgresql" in head.rejected_alternatives
    assert gateway.rows("SELECT count(*) FROM conflicts") == [(0,)]


def test_an_open_contradiction_is_delivered_until_it_is_resolved(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    old = postgres()
    gateway = make_gateway(beliefs=[old, *OTHER_BELIEFS], extract_workers=1)
    # The model insists on a new belief, even when shown the old one: a conflict opens.
    proposal = extraction_reply(extraction(new_beliefs=[new_belief("primary_database", COCKROACH)]))
    upstream.queue(proposal, proposal)
    chat(gateway, HEADS_UP)
    wait_jobs(gateway, 1)
    [(conflict_id,)] = gateway.rows("SELECT id FROM conflicts WHERE status = 'open'")

    upstream.queue(extraction_reply(extraction()))
    chat(gateway, "Which postgres version should the invoice schema target?")
    sent = forwarded(upstream)
    stored = old.updated_at.date().isoformat()
    said = gateway.rows("SELECT created_at FROM conflicts")[0][0].date().isoformat()
    assert "check with the user which holds" in sent
    assert (
        f'primary_database: stored {stored}: \\"The team\'s primary database is PostgreSQL 16.\\"'
        f' / said {said}: \\"{COCKROACH}\\"' in sent
    )

    resolved = httpx.post(
        f"{gateway.url}/api/conflicts/{conflict_id}/resolve",
        json={"resolution": "keep_existing"},
        timeout=10,
    )
    assert resolved.status_code == 200, resolved.text
    upstream.queue(extraction_reply(extraction()))
    chat(gateway, "Which postgres version should the invoice schema target?")
    sent = forwarded(upstream)
    assert "PostgreSQL 16" in sent and "check with the user" not in sent


@pytest.mark.parametrize("client", ["claude-code", "codex"])
def test_a_real_clients_turn_receives_the_open_contradiction_of_a_belief_it_gets(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream, client: str
) -> None:
    known = BELIEFS[client]
    gw = make_gateway(beliefs=[*CORPUS, known])
    claim = {"claude-code": "Deploys go to Render.", "codex": "Tests run with ward."}[client]

    def contradict(store: BeliefStore) -> None:
        with store.transaction():
            proposed = known.model_copy(update={"id": "b-proposed", "content": claim})
            record_conflict(store, user_id=USER, existing_id=known.id, proposed=proposed, reason="")

    gw.on_store(contradict)
    turn = recorded(f"{client}-session2")[-1]
    replay(gw, turn)
    [sent] = provider_copies(upstream, turn["path"])
    text = json.dumps(sent.json)
    assert "check with the user which holds" in text
    assert known.content in text and claim in text
