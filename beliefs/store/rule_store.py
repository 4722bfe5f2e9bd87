"""Namespace rules in the database: migration, defaults that are only ever added, CRUD."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from beliefs.index.belief_index import BeliefIndex
from beliefs.model.errors import BeliefNotFound, InvalidBelief, reason
from beliefs.model.models import Belief, utcnow
from beliefs.model.rules import Rule, RuleSet
from beliefs.store.connection import Connection
from beliefs.store.database import BeliefDatabase
from beliefs.store.migrations import RULE_COLUMNS as _COLUMNS

EDITABLE = ("pattern", "bonus", "template", "memory_class")


def _rule(row: tuple[Any, ...]) -> Rule:
    return Rule(**dict(zip(_COLUMNS, row, strict=True)))


def load_rules(conn: Connection, *, include_deleted: bool = False) -> list[Rule]:
    where = "" if include_deleted else "WHERE deleted_at IS NULL"
    rows = conn.execute(
        f"SELECT {', '.join(_COLUMNS)} FROM rules {where} ORDER BY pattern, id"
    ).fetchall()
    return [_rule(r) for r in rows]


def rule_set(conn: Connection) -> RuleSet:
    return RuleSet(tuple(load_rules(conn)))


class RuleHolding(BeliefDatabase):
    """The namespace rules, cached; reloaded after a rule write (here or on another replica)."""

    def __init__(
        self, conn: Connection, path: Path | str, *, read_only: bool, index: BeliefIndex
    ) -> None:
        super().__init__(conn, path, read_only=read_only, index=index)
        self.rules = RuleSet()

    def reload_rules(self) -> None:
        """Refresh the cached rules (after a rule write, or on open)."""
        self.rules = rule_set(self.conn)
        self.index.forget_derived()

    def _with_default_class(self, belief: Belief) -> Belief:
        """A new belief without a memory class takes its scope's rule default, if any."""
        if belief.memory_class is not None:
            return belief
        default = self.rules.memory_class(belief.scope, belief.user_id)
        return belief if default is None else belief.model_copy(update={"memory_class": default})


def get_rule(db: BeliefDatabase, rule_id: str) -> Rule:
    row = db.conn.execute(
        f"SELECT {', '.join(_COLUMNS)} FROM rules WHERE id = ? AND deleted_at IS NULL", [rule_id]
    ).fetchone()
    if row is None:
        raise BeliefNotFound(f"no rule with id {rule_id!r}; `tenure rules list` shows them")
    return _rule(row)


def create_rule(db: RuleHolding, rule: Rule) -> Rule:
    with db.transaction():
        db.note_change("rules", "*")
        if db.conn.execute("SELECT 1 FROM rules WHERE id = ?", [rule.id]).fetchone():
            raise InvalidBelief(f"rule id {rule.id} already exists; use a new id")
        db.conn.execute(
            f"INSERT INTO rules ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
            [getattr(rule, c) for c in _COLUMNS],
        )
    db.reload_rules()
    return rule


def update_rule(db: RuleHolding, rule_id: str, changes: Mapping[str, Any]) -> Rule:
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise InvalidBelief(f"rule field(s) {unknown} cannot be changed; editable: {EDITABLE}")
    current = get_rule(db, rule_id)
    try:
        rule = Rule.model_validate({**current.model_dump(), **changes, "updated_at": utcnow()})
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InvalidBelief(f"rule {'.'.join(map(str, err['loc']))}: {reason(err)}") from None
    with db.transaction():
        db.note_change("rules", "*")
        db.conn.execute(
            "UPDATE rules SET pattern = ?, bonus = ?, template = ?, memory_class = ?, "
            "updated_at = ? WHERE id = ?",
            [rule.pattern, rule.bonus, rule.template, rule.memory_class, rule.updated_at, rule_id],
        )
    db.reload_rules()
    return rule


def delete_rule(db: RuleHolding, rule_id: str) -> None:
    """Rules are retired, not erased: a deleted default must never be re-added by an upgrade."""
    get_rule(db, rule_id)
    with db.transaction():
        db.note_change("rules", "*")
        db.conn.execute("UPDATE rules SET deleted_at = ? WHERE id = ?", [utcnow(), rule_id])
    db.reload_rules()
