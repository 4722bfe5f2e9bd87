"""Random sequences of store operations keep every invariant and never lose a row."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from beliefs.model.errors import BeliefError
from beliefs.model.models import Belief
from beliefs.opening import open_store

NAMES = st.sampled_from(["editor", "linting", "database", "tone"])
SCOPES = st.sampled_from([["user:universal"], ["domain:code"], ["domain:code", "project:x"]])
USERS = st.sampled_from(["alice", "bob"])


class StoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp())
        self.store = open_store(self.dir / "tenure.duckdb")
        self.ids: set[str] = set()
        self.serial = 0  # ids must not be random: hypothesis replays draws by position

    def _new_id(self) -> str:
        self.serial += 1
        return f"b-{self.serial:04d}"

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _attempt(self, action: str, *args: object) -> bool:
        """Run an operation; a refusal must leave every row exactly as it was."""
        before = self._rows()
        try:
            result = getattr(self.store, action)(*args)
        except BeliefError:
            assert self._rows() == before
            return False
        if isinstance(result, Belief):  # what a write returns is what reading it back gives
            assert result == self._read_back(result.id)
        return True

    def _read_back(self, belief_id: str) -> Belief:
        [row] = [b for b in self._rows() if b.id == belief_id]
        return row.model_copy(update={"change_log": self.store.history(belief_id)})

    def _rows(self) -> list[Belief]:
        return self.store.list(include_superseded=True, include_deleted=True)

    @rule(user=USERS, name=NAMES, scope=SCOPES)
    def create(self, user: str, name: str, scope: list[str]) -> None:
        b = Belief(id=self._new_id(), user_id=user, canonical_name=name, scope=scope)
        if self._attempt("create", b):
            self.ids.add(b.id)

    @precondition(lambda self: self.ids)
    @rule(data=st.data(), name=NAMES, scope=SCOPES)
    def supersede(self, data: st.DataObject, name: str, scope: list[str]) -> None:
        old_id = data.draw(st.sampled_from(sorted(self.ids)))
        old = self.store.get(old_id)
        replacement = Belief(
            id=self._new_id(), user_id=old.user_id, canonical_name=name, scope=scope
        )
        if self._attempt("supersede", old_id, replacement):
            self.ids.add(replacement.id)
            assert self.store.get(old_id).superseded_by == replacement.id

    @precondition(lambda self: self.ids)
    @rule(data=st.data())
    def soft_delete(self, data: st.DataObject) -> None:
        self._attempt("soft_delete", data.draw(st.sampled_from(sorted(self.ids))))

    @precondition(lambda self: self.ids)
    @rule(data=st.data())
    def hard_delete(self, data: st.DataObject) -> None:
        belief_id = data.draw(st.sampled_from(sorted(self.ids)))
        self.store.hard_delete(belief_id)
        self.ids.discard(belief_id)
        assert self.store.history(belief_id)[-1].detail == {"hard": True}

    @precondition(lambda self: self.ids)
    @rule(data=st.data())
    def restore(self, data: st.DataObject) -> None:
        self._attempt("restore", data.draw(st.sampled_from(sorted(self.ids))))

    @precondition(lambda self: self.ids)
    @rule(data=st.data(), alias=st.sampled_from(["vim", "Vim", "nvim", "pg", "biome"]))
    def reinforce(self, data: st.DataObject, alias: str) -> None:
        belief_id = data.draw(st.sampled_from(sorted(self.ids)))
        before = self.store.get(belief_id)
        try:
            after = self.store.reinforce(belief_id, aliases=[alias])
        except BeliefError:
            assert before.deleted_at is not None
            return
        assert after == self._read_back(belief_id)
        assert after.reinforcement_count == before.reinforcement_count + 1
        assert len(after.aliases) <= 25

    @invariant()
    def verify_is_clean(self) -> None:
        assert self.store.verify() == []

    @invariant()
    def no_row_is_lost_and_index_matches(self) -> None:
        rows = {b.id: b for b in self._rows()}
        assert set(rows) == self.ids
        for belief_id, row in rows.items():
            expected = None if row.deleted_at is not None else row
            assert self.store.index.get(belief_id) == expected
        assert len(self.store.index) == sum(1 for r in rows.values() if r.deleted_at is None)

    @invariant()
    def memory_matches_database(self) -> None:
        # Writes are checked and returned from memory; it must equal what the rows say.
        for row in self._rows():
            assert self.store.get(row.id, with_history=False) == row


StoreMachine.TestCase.settings = settings(
    max_examples=15,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestStoreMachine = StoreMachine.TestCase
