from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from beliefs.model.models import Belief
from extractor.merge import inherit, plan_merge, referenced
from extractor.plan import Plan
from extractor.schema import ExtractionOutput
from extractor.turn import Turn
from tests.extractor.fake_llm import extraction, new_belief, update

NOW = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)
TURN = Turn(
    request_id="req-1",
    user_id="u1",
    agent_id="cli",
    scopes=["project:billing"],
    model="small",
    user_message="m",
)


def existing(name: str, content: str, **kwargs: Any) -> Belief:
    base: dict[str, Any] = {
        "user_id": "u1",
        "canonical_name": name,
        "content": content,
        "scope": ["project:billing"],
        "aliases": ["old alias"],
        "rejected_alternatives": ["mongoose"],
    }
    base.update(kwargs)
    return Belief(**base)


def merge(raw: dict[str, Any], known: list[Belief] | None = None) -> Plan:
    out = ExtractionOutput.model_validate(raw)
    return plan_merge(out, TURN, known or [], model="openai/small", now=NOW, job_id="j1")


def test_a_new_belief_is_created_pending_extracted_with_provenance() -> None:
    plan = merge(
        extraction(new_beliefs=[new_belief("DB driver", "Raw driver.", aliases=["driver"])])
    )
    [created] = plan.creates
    assert created.canonical_name == "db_driver"
    assert created.review_state == "pending" and created.source_type == "extracted"
    assert created.scope == ["project:billing"]
    assert created.aliases == ["driver"]
    assert created.provenance == {
        "request_id": "req-1",
        "model": "openai/small",
        "extracted_at": NOW.isoformat(),
        "agent_id": "cli",
        "job_id": "j1",
    }


def test_low_confidence_is_dropped_with_a_reason() -> None:
    plan = merge(extraction(new_beliefs=[new_belief("maybe", "x", confidence=0.2)]))
    assert plan.creates == []
    assert "below 0.35" in plan.skipped[0].reason


def test_scopes_outside_the_turn_fall_back_to_the_turn_scope() -> None:
    plan = merge(
        extraction(
            new_beliefs=[
                new_belief("a", "x", scope=["project:other"]),
                new_belief("b", "y", scope=["user:universal"], type="preference"),
            ]
        )
    )
    assert [b.scope for b in plan.creates] == [["project:billing"], ["user:universal"]]


def test_only_beliefs_about_the_person_go_to_user_universal() -> None:
    plan = merge(
        extraction(
            new_beliefs=[
                new_belief("queue_choice", "x", scope=["user:universal"]),
                new_belief("likes_short_answers", "y", scope=["user:universal"], type="preference"),
                new_belief("both", "z", scope=["user:universal", "project:billing"], type="entity"),
            ]
        )
    )
    scopes = {b.canonical_name: b.scope for b in plan.creates}
    assert scopes == {
        "queue_choice": ["project:billing"],
        "likes_short_answers": ["user:universal"],
        "both": ["project:billing"],
    }


def test_same_name_same_content_reinforces_and_unions_aliases() -> None:
    old = existing("db_driver", "Uses the raw driver.")
    plan = merge(
        extraction(
            new_beliefs=[
                new_belief(
                    "db_driver",
                    "uses the raw driver",
                    aliases=["Old Alias", "raw"],
                    rejected_alternatives=["prisma"],
                )
            ]
        ),
        [old],
    )
    assert plan.creates == [] and plan.conflicts == []
    [r] = plan.reinforcements
    assert r.belief_id == old.id and r.aliases == ("raw",)
    assert r.rejected_alternatives == ("prisma",)


def test_same_name_different_content_opens_a_conflict() -> None:
    old = existing("db_driver", "Uses the raw driver.")
    plan = merge(extraction(new_beliefs=[new_belief("db_driver", "Uses Prisma.")]), [old])
    assert plan.creates == [] and plan.reinforcements == []
    [c] = plan.conflicts
    assert c.existing_id == old.id and c.proposed.content == "Uses Prisma."


def test_a_belief_in_another_scope_does_not_collide() -> None:
    old = existing("db_driver", "Uses the raw driver.", scope=["project:other"])
    plan = merge(extraction(new_beliefs=[new_belief("db_driver", "Uses Prisma.")]), [old])
    assert len(plan.creates) == 1 and plan.conflicts == []


def test_supersession_by_a_wrong_id_falls_back_to_the_canonical_name() -> None:
    old = existing("cache_store", "Uses Redis.", pinned=True)
    plan = merge(
        extraction(
            belief_updates=[
                update(
                    "superseded",
                    belief_id="b-mangled",
                    canonical_name="cache_store",
                    new_content="Uses Valkey.",
                    new_canonical_name="cache_engine",
                    reason="switched",
                )
            ]
        ),
        [old],
    )
    [s] = plan.supersessions
    assert s.old_id == old.id and s.reason == "switched"
    new = s.replacement
    assert new.canonical_name == "cache_engine" and new.content == "Uses Valkey."
    # the chosen option is named, the replaced one ruled out
    assert new.aliases == ["Valkey", "old alias", "cache_store"]
    assert new.rejected_alternatives == ["Redis", "mongoose"]
    assert new.pinned and new.scope == ["project:billing"]
    assert new.review_state == "pending" and new.source_type == "extracted"


def test_a_new_belief_repeating_the_replacement_merges_into_it() -> None:
    old = existing("cache_store", "Uses Redis.")
    plan = merge(
        extraction(
            belief_updates=[
                update("superseded", canonical_name="cache_store", new_content="Uses Valkey.")
            ],
            new_beliefs=[new_belief("cache_store", "Uses Valkey.", aliases=["valkey"])],
        ),
        [old],
    )
    assert plan.creates == [] and plan.conflicts == []
    assert "valkey" in plan.supersessions[0].replacement.aliases


def test_contradicted_update_opens_a_conflict_and_needs_content() -> None:
    old = existing("editor", "Uses Vim.")
    plan = merge(
        extraction(
            belief_updates=[
                update("contradicted", belief_id=old.id, new_content="Uses Emacs."),
                update("contradicted", canonical_name="editor"),
            ]
        ),
        [old],
    )
    [c] = plan.conflicts
    assert c.existing_id == old.id and c.proposed.content == "Uses Emacs."
    assert len(plan.skipped) == 1


def test_updates_to_unknown_beliefs_are_skipped_with_the_reason() -> None:
    plan = merge(extraction(belief_updates=[update("reinforced", canonical_name="ghost")]))
    assert plan.is_empty()
    assert "no live belief" in plan.skipped[0].reason


def test_entity_updates_enrich_with_only_new_aliases() -> None:
    old = existing("kubernetes", "Runs on k8s.", aliases=["k8s"])
    plan = merge(
        extraction(
            entity_updates=[
                {
                    "canonical_name": "kubernetes",
                    "new_aliases": ["K8S", "kube", "sk-abcdefghijklmnopqrstuv"],
                }
            ]
        ),
        [old],
    )
    [e] = plan.enrichments
    assert e.belief_id == old.id and e.aliases == ("kube",)


def test_open_questions_resolve_by_id_with_a_quote_or_by_the_new_belief() -> None:
    q1 = existing("which_queue", "SQS or Kafka?", type="open_question")
    q2 = existing("which_orm", "Which ORM?", type="open_question")
    turn = TURN.model_copy(update={"user_message": "OK, final answer: Kafka it is.\nNo ORM."})
    out = ExtractionOutput.model_validate(
        extraction(
            resolved_open_questions=[{"id": q1.id, "quote": "final answer:  Kafka it is"}],
            new_beliefs=[new_belief("orm_choice", "No ORM.", resolves_open_question=q2.id)],
        )
    )
    plan = plan_merge(out, turn, [q1, q2], model="openai/small", now=NOW, job_id="j1")
    assert {(r.belief_id, r.resolved_by) for r in plan.resolutions} == {
        (q1.id, None),
        (q2.id, plan.creates[0].id),
    }


def test_a_resolution_needs_the_id_and_the_users_own_words() -> None:
    q1 = existing("which_queue", "SQS or Kafka?", type="open_question")
    out = ExtractionOutput.model_validate(
        extraction(
            resolved_open_questions=[
                "which_queue",  # a bare name, the old form: skipped
                {"id": "which_queue", "quote": "m"},  # a name where the id belongs
                {"id": q1.id, "quote": "we chose Kafka"},  # words the user never said
            ]
        )
    )
    plan = plan_merge(out, TURN, [q1], model="openai/small", now=NOW, job_id="j1")
    assert plan.resolutions == []
    reasons = " | ".join(f"{s.item}: {s.reason}" for s in [*out.skipped, *plan.skipped])
    assert "resolved_open_questions[0]" in reasons
    assert "needs the id" in reasons and "not in the user's message" in reasons


def test_inferred_is_promoted_after_five_reinforcements_and_48_hours() -> None:
    ripe = existing(
        "tabs",
        "Prefers tabs.",
        epistemic_status="inferred",
        reinforcement_count=4,
        created_at=NOW - timedelta(hours=49),
    )
    young = existing(
        "spaces",
        "Prefers spaces.",
        epistemic_status="inferred",
        reinforcement_count=9,
        created_at=NOW - timedelta(hours=2),
    )
    plan = merge(
        extraction(
            belief_updates=[
                update("reinforced", canonical_name="tabs"),
                update("reinforced", canonical_name="spaces"),
            ]
        ),
        [ripe, young],
    )
    assert {r.belief_id: r.promote for r in plan.reinforcements} == {
        ripe.id: True,
        young.id: False,
    }


def test_secrets_in_the_output_are_never_planned() -> None:
    plan = merge(
        extraction(
            new_beliefs=[
                new_belief(
                    "deploy_key",
                    "Deploys with api_key=Zx9aQ2mP7rT4wL8kN3vB.",
                    aliases=["ghp_abcdefghijklmnopqrstuvwxyz0123"],
                )
            ]
        )
    )
    [b] = plan.creates
    assert "Zx9aQ2mP7rT4wL8kN3vB" not in b.content and b.aliases == []


def test_referenced_collects_ids_and_normalised_names() -> None:
    out = ExtractionOutput.model_validate(
        extraction(
            new_beliefs=[new_belief("DB Driver", "x")],
            belief_updates=[update("reinforced", belief_id="b-1", canonical_name="Cache")],
        )
    )
    assert referenced(out) == ({"b-1"}, {"db_driver", "cache"})


def test_inherit_keeps_the_old_name_only_when_it_changed() -> None:
    old = existing("a", "x", aliases=["one"])
    same = inherit(old, existing("a", "y", aliases=[], rejected_alternatives=[]))
    assert same.aliases == ["one"]


def test_an_operator_edited_belief_is_contested_not_overwritten() -> None:
    old = existing("editor", "Uses Vim.", user_edited=True)
    plan = merge(
        extraction(
            belief_updates=[
                update("superseded", canonical_name="editor", new_content="Uses Emacs."),
            ]
        ),
        [old],
    )
    assert plan.supersessions == [] and plan.enrichments == []
    [c] = plan.conflicts
    assert c.existing_id == old.id and "edited by the operator" in c.reason


def test_a_secret_in_the_content_is_masked_in_every_field_of_the_belief() -> None:
    secret = "Kx9-Hunter-7q"
    plan = merge(
        extraction(
            new_beliefs=[
                new_belief(
                    "staging login",
                    f"The staging password: {secret}.",
                    aliases=[secret, "staging"],
                    why_it_matters=f"Type {secret} when staging asks.",
                )
            ]
        )
    )
    [created] = plan.creates
    assert secret not in created.model_dump_json()
    assert created.aliases == ["staging"]  # a name that held a secret is dropped


def test_a_secret_in_new_content_is_masked_in_the_reason() -> None:
    secret = "Kx9-Hunter-7q"
    old = existing("staging login", "Staging has no password.")
    plan = merge(
        extraction(
            belief_updates=[
                update(
                    "superseded",
                    belief_id=old.id,
                    new_content=f"The staging password: {secret}.",
                    reason=f"the user gave {secret}",
                )
            ]
        ),
        [old],
    )
    assert plan.supersessions and secret not in str(plan)


def _postgres() -> Belief:
    return existing(
        "primary_database",
        "The team's primary database is PostgreSQL 16.",
        why_it_matters="Design schemas and queries for PostgreSQL 16.",
        aliases=["postgresql", "postgres", "pg", "primary db"],
        rejected_alternatives=["mysql"],
    )


def _superseded(old: Belief, content: str, **kwargs: Any) -> Belief:
    """The replacement planned when the turn supersedes `old` with `content`."""
    up = update("superseded", canonical_name=old.canonical_name, new_content=content, **kwargs)
    [s] = merge(extraction(belief_updates=[up]), [old]).supersessions
    return s.replacement


def test_a_supersession_rules_out_the_old_option_and_drops_its_directive() -> None:
    new = _superseded(_postgres(), "The team's primary database is CockroachDB 24.")
    # The old option's names are ruled out, not "also called"; the subject's name stays and
    # the new option is named, so a turn about CockroachDB alone finds the belief.
    assert new.aliases == ["CockroachDB", "primary db"]
    assert new.rejected_alternatives == ["postgresql", "postgres", "pg", "mysql"]
    # No directive came with the update: the old one, naming PostgreSQL, says the same swap.
    assert new.why_it_matters == "Design schemas and queries for CockroachDB 24."


def test_a_version_bump_rewrites_the_directive_and_rules_nothing_out() -> None:
    new = _superseded(_postgres(), "The team's primary database is PostgreSQL 17.")
    assert new.why_it_matters == "Design schemas and queries for PostgreSQL 17."
    assert new.aliases == ["postgresql", "postgres", "pg", "primary db"]
    assert new.rejected_alternatives == ["mysql"]


def test_a_supersession_takes_the_directive_and_ruled_out_names_of_the_turn() -> None:
    old = existing(
        "package_manager",
        "Uses yarn for every package.",
        why_it_matters="Run installs and scripts with yarn.",
        aliases=["yarn", "yarnpkg"],
        rejected_alternatives=["pnpm"],
    )
    new = _superseded(
        old,
        "Switched from yarn to pnpm for every package.",
        why_it_matters="Run installs and scripts with pnpm; never yarn.",
        rejected_alternatives=["Yarn"],
    )
    assert new.why_it_matters == "Run installs and scripts with pnpm; never yarn."
    # pnpm was ruled out once and is now the choice: it leaves the rejected list.
    assert new.rejected_alternatives == ["Yarn", "yarnpkg"]
    assert new.aliases == ["pnpm"]


def test_a_directive_that_still_fits_is_kept() -> None:
    old = existing(
        "primary_database",
        "The primary database is PostgreSQL 16.",
        why_it_matters="Check every migration against the primary database.",
        aliases=["postgresql"],
        rejected_alternatives=[],
    )
    new = _superseded(old, "The primary database is CockroachDB 24.")
    assert new.why_it_matters == "Check every migration against the primary database."
    assert new.rejected_alternatives == ["postgresql"]


def _yarn() -> Belief:
    return existing(
        "package_manager",
        "Uses yarn for every package.",
        why_it_matters="Run installs with yarn.",
        aliases=["yarn"],
        rejected_alternatives=[],
    )


def test_a_move_named_in_the_new_content_rules_the_old_option_out() -> None:
    new = _superseded(_yarn(), "Moved from yarn to pnpm.")
    assert (new.aliases, new.rejected_alternatives) == (["pnpm"], ["yarn"])
    assert new.why_it_matters == "Run installs with pnpm."  # the option it moved to


def test_a_directive_naming_the_old_option_with_no_new_one_in_sight_is_dropped() -> None:
    new = _superseded(_yarn(), "We stopped using yarn; packages are vendored into the repository.")
    assert new.why_it_matters == "" and new.rejected_alternatives == ["yarn"]


def test_a_contradiction_proposes_the_turns_directive_not_the_old_one() -> None:
    up = update(
        "contradicted", canonical_name="primary_database", new_content="Billing runs on CRDB."
    )
    [c] = merge(extraction(belief_updates=[up]), [_postgres()]).conflicts
    assert c.proposed.why_it_matters == ""


def test_yarn_to_pnpm_without_a_directive_or_names_from_the_turn() -> None:
    old = existing(
        "package_manager",
        "The team uses yarn for packages.",
        why_it_matters="Run installs and scripts with yarn.",
        aliases=["yarn", "yarnpkg", "packages"],
        rejected_alternatives=["npm"],
    )
    new = _superseded(old, "The team uses pnpm for packages.")
    assert new.why_it_matters == "Run installs and scripts with pnpm."
    assert new.aliases == ["pnpm", "packages"]
    assert new.rejected_alternatives == ["yarn", "yarnpkg", "npm"]


def test_a_correction_that_names_the_new_option_past_other_words_names_it() -> None:
    new = _superseded(
        _postgres(), "Billing now runs on CockroachDB 24 for everything. Agreed in March."
    )
    assert new.aliases == ["CockroachDB", "primary db"]
    assert new.rejected_alternatives == ["postgresql", "postgres", "pg", "mysql"]
