"""Namespace rules: patterns, bonuses, templates, memory classes, defaults added only once."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from beliefs.context.assembly import ContextRequest, assemble
from beliefs.context.render import user_block
from beliefs.model.errors import InvalidBelief
from beliefs.model.models import Belief
from beliefs.model.rules import DEFAULT_RULES, Rule, RuleSet
from beliefs.opening import open_store
from beliefs.store.migrations import RULES, add_default_rules, migrate
from beliefs.store.rule_store import create_rule, delete_rule, load_rules, update_rule
from tests.beliefs.factory import belief, index_of


def test_patterns_star_user_segment_and_sub_scopes() -> None:
    rule = Rule(pattern="project:*")
    assert rule.matches("project:billing", "alice") and rule.matches("project:a/b", "alice")
    assert not rule.matches("domain:code", "alice")
    mine = Rule(pattern="domain:notes/${user_id}")
    assert mine.matches("domain:notes/alice", "alice")
    assert mine.matches("domain:notes/alice/drafts", "alice")  # covers sub-scopes
    assert not mine.matches("domain:notes/bob", "alice")
    assert not mine.matches("domain:notes", "alice")
    assert not Rule(pattern="domain:notes/${user_id}").matches("domain:notes/a/b", "a/b")
    exact = Rule(pattern="domain:code")
    assert exact.matches("domain:code/python", "x") and not exact.matches("domain:codex", "x")


def test_bad_patterns_and_bonuses_are_refused_and_big_bonuses_warn() -> None:
    with pytest.raises(ValueError, match="must look like"):
        Rule(pattern="code")
    with pytest.raises(ValueError):
        Rule(pattern="domain:x", bonus=1.5)
    assert Rule(pattern="domain:x", bonus=0.2).warnings == []
    assert "weak hits" in Rule(pattern="domain:x", bonus=0.4).warnings[0]


def test_bonuses_reorder_hits_and_stack() -> None:
    index = index_of(
        belief("chat", "kafka_chat", ["kafka", "chatter"], scope=["domain:chat"]),
        belief("faq", "kafka_faq", ["kafka", "queue"], scope=["domain:faq/official"]),
        filler=40,
    )
    request = ContextRequest("u1", ("domain:chat", "domain:faq/official"), "kafka")
    plain = assemble(index, request)
    assert [h.belief.id for h in plain.relevant] == ["chat", "faq"]  # a tie, broken by id
    rules = RuleSet(
        (Rule(pattern="domain:faq", bonus=0.2), Rule(pattern="domain:faq/*", bonus=0.1))
    )
    boosted = assemble(index, request, rules=rules)
    assert [h.belief.id for h in boosted.relevant] == ["faq", "chat"]
    faq = {h.belief.id: h.score for h in boosted.relevant}["faq"]
    base = {h.belief.id: h.score for h in plain.relevant}["faq"]
    assert faq == pytest.approx(base * 1.3)  # 0.2 + 0.1 stack


def test_bonuses_and_templates_follow_an_edited_belief_and_new_rules() -> None:
    index = index_of(
        belief("chat", "kafka_chat", ["kafka", "chatter"], scope=["domain:chat"]),
        belief("faq", "kafka_faq", ["kafka", "queue"], scope=["domain:faq"]),
        filler=40,
    )
    request = ContextRequest("u1", ("domain:chat", "domain:faq"), "kafka")
    rules = RuleSet((Rule(pattern="domain:faq", bonus=0.2, template="FAQ:\n{{content}}"),))
    first = assemble(index, request, rules=rules)
    assert [h.belief.id for h in first.relevant] == ["faq", "chat"]
    assert "FAQ:" in user_block(first)
    # The same id, now in the other scope: its remembered weight and template must not stick.
    moved = index.get("faq")
    assert moved is not None
    index.upsert(moved.model_copy(update={"scope": ["domain:chat"]}))
    again = assemble(index, request, rules=rules)
    assert [h.belief.id for h in again.relevant] == ["chat", "faq"]
    assert "FAQ:" not in user_block(again)
    # A new rule set (the operator edited the rules) weighs afresh.
    chat_rules = RuleSet((Rule(pattern="domain:chat", bonus=0.5),))
    scores = {h.belief.id: h.score for h in assemble(index, request, rules=chat_rules).relevant}
    plain = {h.belief.id: h.score for h in assemble(index, request).relevant}
    assert scores["chat"] == pytest.approx(plain["chat"] * 1.5)


def test_template_once_per_group_placeholder_and_longest_pattern() -> None:
    index = index_of(
        belief("l1", "gdpr_retention", ["retention period"], scope=["domain:legal/eu"]),
        belief("l2", "gdpr_consent", ["consent"], scope=["domain:legal/eu"]),
        belief("n", "retention_notes", ["retention policy"], scope=["domain:notes"]),
        filler=40,
    )
    rules = RuleSet((
        Rule(pattern="domain:legal", template="Always cite the paragraph:\n{{content}}\nEnd."),
        Rule(pattern="domain:legal/eu", template="(SOURCE) EU law; cite the article:"),
        Rule(pattern="domain:notes", template="(MEMORY) Chat notes:\n{{content}}"),
    ))  # fmt: skip
    ctx = assemble(
        index,
        ContextRequest(
            "u1",
            ("domain:legal/eu", "domain:notes"),
            "retention period, retention policy and GDPR consent",
        ),
        rules=rules,
    )
    block = user_block(ctx)
    assert block.count("(SOURCE) EU law; cite the article:") == 1  # longest pattern, once
    assert "Always cite the paragraph" not in block
    eu = block.index("(SOURCE) EU law")
    assert block.index("[l1]") > eu and block.index("[l2]") > eu  # appended without placeholder
    assert block.count("(MEMORY) Chat notes:") == 1 and block.index("[n]") > block.index(
        "Chat notes"
    )
    assert "##### Sources" in block and "- Memory `<scope>`" in block and "domain:legal/eu" in block


def test_memory_class_defaults_on_create_and_rule_changes_reclassify_nothing(
    tmp_path: Path,
) -> None:
    with open_store(tmp_path / "t.duckdb") as store:
        created = store.create(Belief(user_id="u", canonical_name="a", scope=["domain:scratch"]))
        assert created.memory_class == "working"
        own = store.create(
            Belief(
                user_id="u", canonical_name="b", scope=["domain:scratch"], memory_class="episodic"
            )
        )
        assert own.memory_class == "episodic"
        rule = create_rule(store, Rule(pattern="domain:scratch/today", memory_class="procedural"))
        sub = store.create(Belief(user_id="u", canonical_name="c", scope=["domain:scratch/today"]))
        assert sub.memory_class == "procedural"  # longest pattern wins
        update_rule(store, rule.id, {"memory_class": "episodic"})
        assert store.get(sub.id).memory_class == "procedural"
        none = store.create(Belief(user_id="u", canonical_name="d", scope=["domain:mixed"]))
        assert none.memory_class is None


def test_default_rules_migration_never_resurrects_an_edited_or_deleted_default(
    tmp_path: Path,
) -> None:
    with open_store(tmp_path / "t.duckdb") as store:
        patterns = {r.pattern for r in load_rules(store.conn)}
        assert {r.pattern for r in DEFAULT_RULES} <= patterns
        update_rule(store, "r-default-project", {"bonus": 0.2, "pattern": "project:client-*"})
        delete_rule(store, "r-default-scratch")
        for statement in add_default_rules():  # an upgrade running the adds again
            store.execute(statement)
        store.reload_rules()
        rules = {r.id: r for r in load_rules(store.conn)}
        assert rules["r-default-project"].bonus == 0.2
        assert rules["r-default-project"].pattern == "project:client-*"
        assert "r-default-scratch" not in rules
        assert "project:*" not in {r.pattern for r in rules.values()}


def test_rules_migration_runs_once_per_database(tmp_path: Path) -> None:
    conn = duckdb.connect(str(tmp_path / "t.duckdb"))
    assert RULES.key in migrate(conn)
    assert migrate(conn) == []
    count = conn.execute("SELECT count(*) FROM rules").fetchone()
    assert count == (len(DEFAULT_RULES),)
    conn.close()


def test_rule_edits_are_validated(tmp_path: Path) -> None:
    with open_store(tmp_path / "t.duckdb") as store:
        with pytest.raises(InvalidBelief, match="bonus"):
            update_rule(store, "r-default-docs", {"bonus": 3})
        with pytest.raises(InvalidBelief, match="cannot be changed"):
            update_rule(store, "r-default-docs", {"id": "x"})


def test_hits_without_a_template_get_their_own_heading_after_a_source_group() -> None:
    index = index_of(
        belief("s", "retention_policy", ["RetainIQ"], scope=["domain:docs"]),
        belief("p", "retention_dashboard", ["RetainIQ"], scope=["domain:plain"]),
        filler=40,
    )
    rules = RuleSet(
        (Rule(pattern="domain:docs", template="(SOURCE) Passages from your documents:"),)
    )
    ctx = assemble(
        index, ContextRequest("u1", ("domain:docs", "domain:plain"), "RetainIQ"), rules=rules
    )
    block = user_block(ctx)
    lines = block.splitlines()
    at = {line.split("]")[0].lstrip("- ["): n for n, line in enumerate(lines) if "] " in line}
    assert lines[at["s"] - 1] == "(SOURCE) Passages from your documents:"
    assert lines[at["p"] - 1] == "(MEMORY) Other beliefs from memory (never cited):"
    alone = assemble(index, ContextRequest("u1", ("domain:plain",), "RetainIQ"), rules=rules)
    assert "Other beliefs" not in user_block(alone)  # one group: the preamble heads it
