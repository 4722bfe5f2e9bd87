"""Context assembly: layers, hard filters, caps, the token budget and the rendered blocks."""

from __future__ import annotations

from datetime import timedelta

from beliefs.context.assembly import ContextRequest, assemble
from beliefs.context.layers import Context
from beliefs.context.render import (
    RELEVANT_HEADER,
    RELEVANT_PREAMBLE,
    append_block,
    relevant_line,
    strip_injected,
    system_block,
    user_block,
)
from beliefs.index.belief_index import BeliefIndex
from tests.beliefs.factory import T0, belief, index_of

NOW = T0 + timedelta(days=30)


def ctx(index: BeliefIndex, query: str, *scopes: str, persona: str = "", **kw: object) -> Context:
    request = ContextRequest("u1", scopes or ("domain:code",), query, **kw)  # type: ignore[arg-type]
    return assemble(index, request, persona=persona, now=NOW)


def relevant(c: Context) -> list[str]:
    return [h.belief.id for h in c.relevant]


def test_agent_isolation_shows_shared_and_own_agent_beliefs_only() -> None:
    index = index_of(
        belief("shared", "redis_cache", ["redis"]),
        belief("mine", "redis_tuning", ["redis"], agent_id="agent-a"),
        belief("theirs", "redis_cluster", ["redis"], agent_id="agent-b"),
    )
    assert set(relevant(ctx(index, "redis?", agent_id="agent-a"))) == {"shared", "mine"}
    assert relevant(ctx(index, "redis?")) == ["shared"]


def test_scope_isolation_and_parent_scopes_apply_to_sub_scopes() -> None:
    index = index_of(
        belief("code", "redis_cache", ["redis"]),
        belief("py", "redis_py", ["redis"], scope=["domain:code/python"]),
        belief("writing", "redis_character", ["redis"], scope=["domain:writing"]),
        belief("js", "redis_js", ["redis"], scope=["domain:code/js"]),
        belief("uni", "redis_everywhere", ["redis"], scope=["user:universal"]),
    )
    assert set(relevant(ctx(index, "redis"))) == {"code", "uni"}
    assert set(relevant(ctx(index, "redis", "domain:code/python"))) == {"code", "py", "uni"}
    assert set(relevant(ctx(index, "redis", "domain:hobby"))) == {"uni"}


def test_hard_filters_superseded_resolved_rejected_expired_on_demand() -> None:
    index = index_of(
        belief("live", "kafka_live", ["kafka"]),
        belief("old", "kafka_old", ["kafka"], superseded_by="live", epistemic_status="superseded"),
        belief("resolved", "kafka_q", ["kafka"], resolved_at=T0),
        belief("rejected", "kafka_bad", ["kafka"], review_state="rejected"),
        belief("expired", "kafka_tmp", ["kafka"], expires_at=NOW - timedelta(seconds=1)),
        belief("later", "kafka_soon", ["kafka"], expires_at=NOW + timedelta(days=1)),
        belief("demand", "kafka_manual", ["kafka"], delivery="on_demand"),
        belief("pending", "kafka_pending", ["kafka"], review_state="pending"),
        belief("question", "kafka_open", ["kafka"], type="open_question"),
        belief("expert", "kafka_expert", ["kafka"], subtype="expertise"),
        filler=40,
    )
    assert set(relevant(ctx(index, "kafka"))) == {"live", "later", "pending"}
    assert set(relevant(ctx(index, "kafka", curated=True))) == {"live", "later"}


def test_trust_floor_excludes_lower_tiers() -> None:
    index = index_of(
        belief("op", "kafka_op", ["kafka"], source_type="operator"),
        belief("ex", "kafka_ex", ["kafka"], source_type="extracted"),
        belief("im", "kafka_im", ["kafka"], source_type="import"),
    )
    assert set(relevant(ctx(index, "kafka", min_trust=2))) == {"op", "ex"}


def test_relations_pull_in_participants_under_the_same_filters() -> None:
    index = index_of(
        belief(
            "rel",
            "billing_depends_on_ledger",
            ["billing ledger"],
            type="relation",
            participants=["b-ledger", "ledger_question", "b-writing", "b-gone"],
        ),
        belief("b-ledger", "ledger_service", []),
        belief("q", "ledger_question", [], type="open_question"),
        belief("b-writing", "ledger_novel", [], scope=["domain:writing"]),
        belief("b-gone", "ledger_old", [], superseded_by="b-ledger", epistemic_status="superseded"),
    )
    c = ctx(index, "the billing ledger sync")
    assert relevant(c) == ["rel", "b-ledger"]
    assert c.relevant[1].clauses[0].field == "participant"
    assert [b.id for b in c.open_questions] == ["q"]


def test_pinned_layer_order_cap_and_sharing_the_belief_cap() -> None:
    pins = [
        belief(f"p{i}", f"pin_{i}", [], pinned=True, last_reinforced_at=T0 + timedelta(hours=i))
        for i in range(12)
    ]
    edited = belief("edited", "pin_edited", [], pinned=True, user_edited=True)
    hits = [belief(f"h{i}", f"hit_{i}", ["kafka"]) for i in range(5)]
    index = index_of(*pins, edited, *hits)
    c = ctx(index, "kafka", max_beliefs=13)
    assert [b.id for b in c.pinned][:3] == ["edited", "p11", "p10"]
    assert len(c.pinned) == 10
    assert len(c.relevant) == 3
    assert {("p0", "max_pinned"), ("p1", "max_pinned")} <= set(c.budget.shed)
    assert relevant(ctx(index, "kafka", max_beliefs=10)) == []


def test_pinned_beliefs_never_repeat_in_relevant() -> None:
    index = index_of(
        belief("p", "kafka_pin", ["kafka"], pinned=True), belief("h", "kafka_hit", ["kafka"])
    )
    c = ctx(index, "kafka")
    assert [b.id for b in c.pinned] == ["p"] and relevant(c) == ["h"]


def test_universal_pins_ride_in_the_persona_when_there_is_one() -> None:
    index = index_of(
        belief("u", "response_length", ["verbosity"], pinned=True, scope=["user:universal"]),
        belief("c", "db_choice", [], pinned=True),
    )
    with_persona = ctx(index, "verbosity please", persona="You prefer direct answers.")
    assert [b.id for b in with_persona.pinned] == ["c"] and relevant(with_persona) == []
    without = ctx(index, "verbosity please")
    assert {b.id for b in without.pinned} == {"u", "c"}


def test_token_budget_sheds_relevant_first_and_never_persona_or_pinned() -> None:
    long = "x " * 300
    index = index_of(
        belief("pin", "pinned_rule", [], pinned=True, content=long),
        *(belief(f"h{i}", f"kafka_{i}", ["kafka"], content=long) for i in range(4)),
    )
    roomy = ctx(index, "kafka", persona="Persona text.", token_budget=100_000)
    assert len(roomy.relevant) == 4 and roomy.budget.shed_ids == []
    tight = ctx(index, "kafka", persona="Persona text.", token_budget=roomy.budget.used_tokens - 50)
    assert len(tight.relevant) == 3
    assert tight.budget.shed_reason == {relevant(roomy)[-1]: "token_budget"}
    starved = ctx(index, "kafka", persona="Persona text.", token_budget=10)
    assert starved.persona and [b.id for b in starved.pinned] == ["pin"] and starved.relevant == []
    assert starved.budget.used_tokens > 10  # the persona and pinned beliefs are never shed


def test_the_budget_counts_one_hit_s_block_as_the_relevant_header_and_its_line() -> None:
    index = index_of(belief("h", "kafka_topics", ["kafka"], content="Topics per tenant."))
    one = ctx(index, "kafka")
    [hit] = one.relevant
    line = relevant_line(hit)
    assert user_block(one) == RELEVANT_HEADER.replace(
        RELEVANT_PREAMBLE, f"{RELEVANT_PREAMBLE}\n{line}"
    )
    header_and_line = (len(RELEVANT_HEADER) + 3) // 4 + (len(line) + 3) // 4
    assert one.budget.used_tokens == header_and_line  # no standing layers: nothing else counted


def test_open_questions_layer_holds_pinned_live_questions_in_scope() -> None:
    index = index_of(
        belief("q1", "auth_strategy", ["jwt"], type="open_question", pinned=True),
        belief("q2", "old_question", [], type="open_question", pinned=True, resolved_at=T0),
        belief(
            "q3", "chapter_order", [], type="open_question", pinned=True, scope=["domain:writing"]
        ),
    )
    c = ctx(index, "jwt tokens")
    assert [b.id for b in c.open_questions] == ["q1"] and relevant(c) == [] and c.pinned == []


def test_rendered_blocks_are_lean_and_strip_back_exactly() -> None:
    index = index_of(
        belief(
            "dec", "db_choice", ["db"], type="decision", pinned=True, content="Use MongoDB. " * 60
        ),
        belief(
            "hyp",
            "kafka_guess",
            ["kafka"],
            epistemic_status="inferred",
            confidence=0.5,
            rejected_alternatives=["RabbitMQ"],
        ),
    )
    c = ctx(index, "kafka", persona="You prefer direct answers.")
    standing, turn = system_block(c), user_block(c)
    assert "(decision)" in standing and "…" in standing and "never instructions" in standing
    assert "db" not in standing.split("db_choice")[1].split(":")[0]  # no aliases for pinned
    assert "(inferred, confidence 0.5)" in turn and "ruled out: RabbitMQ" in turn
    for original in ("", "Be brief.", "line one\n\nline two\n"):
        combined = append_block(append_block(original, standing), turn)
        assert strip_injected(combined) == original


def test_cached_standing_layers_follow_writes() -> None:
    index = index_of(belief("p", "pin_one", [], pinned=True))
    assert [b.id for b in ctx(index, "").pinned] == ["p"]
    index.upsert(belief("p", "pin_one", [], pinned=False))
    assert ctx(index, "").pinned == []
    index.upsert(belief("p2", "pin_two", [], pinned=True, expires_at=NOW + timedelta(seconds=1)))
    assert [b.id for b in ctx(index, "").pinned] == ["p2"]
    later = assemble(
        index, ContextRequest("u1", ("domain:code",), ""), now=NOW + timedelta(hours=1)
    )
    assert later.pinned == []


def test_remembered_verdicts_follow_writes_and_expiry() -> None:
    index = index_of(
        belief("redis", "cache_store", ["redis"], scope=["domain:ops"]),
        belief("pg", "main_database", ["postgres"]),
        filler=40,
    )
    assert relevant(ctx(index, "redis and postgres")) == ["pg"]  # redis: another scope
    index.upsert(belief("redis", "cache_store", ["redis"]))  # moved into domain:code
    assert sorted(relevant(ctx(index, "redis and postgres"))) == ["pg", "redis"]
    index.upsert(belief("pg", "main_database", ["postgres"], review_state="rejected"))
    assert relevant(ctx(index, "redis and postgres")) == ["redis"]
    soon = NOW + timedelta(minutes=5)
    index.upsert(belief("pg", "main_database", ["postgres"], expires_at=soon))
    assert sorted(relevant(ctx(index, "redis and postgres"))) == ["pg", "redis"]
    request = ContextRequest("u1", ("domain:code",), "redis and postgres")
    later = assemble(index, request, now=soon + timedelta(seconds=1))
    assert relevant(later) == ["redis"]


def test_trust_tiers_stable_sort_hits_and_inject_scopes_gate() -> None:
    index = index_of(
        belief("ext", "kafka_ext", ["kafka"], source_type="import", scope=["project:alpha"]),
        belief("agent1", "kafka_agent", ["kafka", "streams"], source_type="extracted"),
        belief("agent2", "kafka_agent2", ["kafka", "streams", "topics"], source_type="extracted"),
        belief("op", "kafka_op", ["kafka", "lanes", "partitions"], source_type="operator"),
        filler=40,
    )
    c = ctx(index, "kafka", "domain:code", "project:alpha")
    assert relevant(c) == ["op", "agent1", "agent2", "ext"]
    assert relevant(
        ctx(index, "kafka", "domain:code", "project:alpha", inject_scopes=("project:*",))
    ) == ["ext"]


def test_universal_pins_the_persona_does_not_cover_stay_pinned() -> None:
    index = index_of(
        belief("u1", "response_length", [], pinned=True, scope=["user:universal"]),
        belief("u2", "no_emoji", [], pinned=True, scope=["user:universal"]),
    )
    request = ContextRequest("u1", ("domain:code",), "")
    partly = assemble(
        index, request, persona="You prefer short answers.", persona_covers=frozenset({"u1"})
    )
    assert [b.id for b in partly.pinned] == ["u2"]
    unverified = assemble(index, request, persona="Text.", persona_covers=frozenset())
    assert {b.id for b in unverified.pinned} == {"u1", "u2"}


def test_a_write_for_one_user_leaves_the_other_users_worked_out_views_in_place() -> None:
    index = index_of(
        belief("pg", "main_database", ["postgres"], pinned=True),
        belief("other-pg", "main_database", ["postgres"], user_id="u2"),
    )
    first = ctx(index, "postgres?")
    views = dict(index.derived_of("u1"))
    assert views and index.user_version("u1") > 0
    version = index.user_version("u1")
    index.upsert(belief("other-redis", "cache", ["redis"], user_id="u2"))  # another user writes
    assert index.user_version("u1") == version and index.derived_of("u1") == views
    again = ctx(index, "postgres?")
    assert [b.id for b in again.pinned] == [b.id for b in first.pinned] == ["pg"]
    standing = dict(index.user("u1").standing)
    assert standing
    index.upsert(belief("kafka", "queue", ["kafka"]))  # this user writes an unpinned belief
    assert index.user_version("u1") > version and not index.derived_of("u1")
    assert index.user("u1").standing == standing  # made of pinned beliefs alone: kept
    assert relevant(ctx(index, "kafka?")) == ["kafka"]
    index.upsert(belief("kafka", "queue", ["kafka"], scope=["domain:writing"]))
    assert index.user("u1").standing == standing
    assert relevant(ctx(index, "kafka?")) == []  # the verdict of before does not hold
    index.upsert(belief("pg", "main_database", ["postgres"], pinned=False))  # a pinned one
    assert not index.user("u1").standing and not index.derived_of("u1")
    changed = ctx(index, "postgres?")
    assert changed.pinned == [] and relevant(changed) == ["pg"]
    index.forget_derived()  # the rules changed: every user's views go
    assert not index.derived_of("u1") and not index.derived_of("u2")


def test_the_pinned_order_follows_edits_without_a_sort() -> None:
    index = index_of(
        *(
            belief(f"p{i}", f"pin_{i}", [], pinned=True, last_reinforced_at=T0 + timedelta(hours=i))
            for i in range(5)
        )
    )
    assert [b.id for b in ctx(index, "hello").pinned] == ["p4", "p3", "p2", "p1", "p0"]
    index.upsert(belief("p1", "pin_1", [], pinned=True, last_reinforced_at=T0 + timedelta(days=2)))
    index.upsert(belief("p3", "pin_3", [], pinned=False))
    index.upsert(belief("p0", "pin_0", [], pinned=True, user_edited=True))
    index.remove("p2")
    assert [b.id for b in ctx(index, "hello").pinned] == ["p0", "p1", "p4"]
    postings = index.user("u1")
    assert [key[3] for key in postings.pinned_order] == ["p0", "p1", "p4"]
    assert postings.pinned == {"p0", "p1", "p4"}
