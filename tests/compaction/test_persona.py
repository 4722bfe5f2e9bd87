"""The persona prelude: deterministic summary, cached by hash, generated, operator-proof."""

from __future__ import annotations

import asyncio
from typing import Any

from beliefs.model.models import Belief
from beliefs.opening import open_store
from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from compaction.persona import deterministic_text, inputs_hash, persona_inputs, sentence
from compaction.persona_keeper import PersonaKeeper
from tests.compaction.conftest import USER, belief
from tests.extractor.fake_llm import FakeChatModel

UNIVERSAL = ["user:universal"]


def universal(name: str, content: str, **fields: Any) -> Belief:
    return belief(name, content, scope=UNIVERSAL, **fields)


def seed(store: BeliefStore) -> list[Belief]:
    made = [
        universal("answer_length", "Prefers short answers without preamble."),
        universal(
            "language", "Writes TypeScript with strict mode everywhere.", reinforcement_count=4
        ),
        universal("testing", "Writes tests before the code.", epistemic_status="inferred"),
        universal("semicolons", "Never uses semicolons in JavaScript."),
        universal(
            "expertise_db", "Databases and query tuning.", subtype="expertise", type="entity"
        ),
        universal("rust_maybe", "Is considering Rust for the CLI.", epistemic_status="exploratory"),
        universal("tabs", "Indents code with tabs.", pinned=True, type="decision"),
        belief("billing_pg", "Billing uses PostgreSQL.", scope=["project:billing"]),
    ]
    return [store.create(b) for b in made]


def keep(store: BeliefStore, fn: Any, llm: Any = None, model: str | None = None) -> Any:
    async def go() -> Any:
        thread = StoreThread(store)
        try:
            return await fn(PersonaKeeper(thread, llm=llm, model=model))
        finally:
            thread.close()

    return asyncio.run(go())


def test_sentences_are_second_person() -> None:
    assert sentence(universal("a", "Prefers short answers.")) == "You prefer short answers."
    assert sentence(universal("b", "Never uses semicolons.")) == "You never use semicolons."
    inferred = universal("c", "Writes tests first.", epistemic_status="inferred")
    assert sentence(inferred) == "You tend to write tests first."
    expertise = universal("d", "Databases and query tuning.", subtype="expertise")
    assert sentence(expertise) == "You have expertise in databases and query tuning."


def test_deterministic_text_is_200_to_400_chars_from_universal_preferences(
    store: BeliefStore,
) -> None:
    seed(store)
    inputs = persona_inputs(store.list(user_id=USER))
    text = deterministic_text(inputs)
    assert 200 <= len(text) <= 400, (len(text), text)
    assert text.startswith("You indent code with tabs.")  # pinned first
    assert "You tend to write tests before the code." in text
    assert "You never use semicolons in JavaScript." in text
    assert "Rust" not in text and "PostgreSQL" not in text


def test_persona_is_cached_by_the_hash_of_its_inputs(store: BeliefStore) -> None:
    made = seed(store)
    first = keep(store, lambda k: k.refresh(USER))
    assert first.source == "deterministic" and first.inputs_hash == inputs_hash(
        persona_inputs(store.list(user_id=USER))
    )
    again = keep(store, lambda k: k.refresh(USER))
    assert again.updated_at == first.updated_at  # same inputs: not regenerated
    store.update(made[0].id, {"content": "Prefers long, thorough answers."})
    changed = keep(store, lambda k: k.refresh(USER))
    assert changed.updated_at > first.updated_at and "long, thorough answers" in changed.text


def test_the_model_writes_the_persona_and_invalid_text_falls_back(store: BeliefStore) -> None:
    seed(store)
    good = "You " + "prefer short, direct answers and strict TypeScript. " * 5
    llm = FakeChatModel([{"text": good.strip()[:390]}])
    persona = keep(store, lambda k: k.refresh(USER), llm, "test-model")
    assert persona.source == "generated" and persona.text == good.strip()[:390]
    assert llm.calls[0]["response_format"]["json_schema"]["name"] == "persona"
    llm.push({"text": "too short"}, {"text": "still too short"})
    fallback = keep(store, lambda k: k.refresh(USER, force=True), llm, "test-model")
    assert fallback.source == "deterministic" and 200 <= len(fallback.text) <= 400


def test_an_operator_persona_is_never_overwritten(store: BeliefStore) -> None:
    made = seed(store)
    store.set_persona(USER, "You are Alice; keep it brief.", source="operator")
    llm = FakeChatModel([{"text": "x" * 300}])
    kept = keep(store, lambda k: k.refresh(USER, force=True), llm, "test-model")
    store.update(made[1].id, {"content": "Writes Go."})
    assert (
        keep(store, lambda k: k.refresh(USER)).text == kept.text == "You are Alice; keep it brief."
    )
    assert keep(store, lambda k: _text_for(k)) == "You are Alice; keep it brief."
    assert llm.calls == []


async def _text_for(keeper: PersonaKeeper) -> str:
    text = keeper.text_for(USER)
    await keeper.wait()
    return text


def test_requests_get_the_summary_before_one_is_stored_and_stale_text_meanwhile(
    store: BeliefStore,
) -> None:
    made = seed(store)
    text = keep(store, _text_for)  # nothing stored: the summary, stored in the background
    stored = store.get_persona(USER)
    assert stored is not None and stored.text == text and stored.source == "deterministic"
    store.update(made[0].id, {"content": "Prefers long answers."})

    async def stale_then_fresh(keeper: PersonaKeeper) -> tuple[str, str]:
        served = keeper.text_for(USER)
        await keeper.wait()
        return served, keeper.text_for(USER)

    served, fresh = keep(store, stale_then_fresh)
    assert served == text and "You prefer long answers." in fresh


def test_persona_covers_only_the_pinned_beliefs_it_actually_carries(store: BeliefStore) -> None:
    made = seed(store)
    tabs = next(b for b in made if b.canonical_name == "tabs")

    async def covers(keeper: PersonaKeeper) -> frozenset[str] | None:
        return keeper.persona_for(USER)[1]

    assert keep(store, covers) == {tabs.id}  # the summary says "You indent code with tabs."
    llm = FakeChatModel([{"text": ("You like brevity and strict types. " * 8).strip()[:390]}])
    keep(store, lambda k: k.refresh(USER, force=True), llm, "test-model")
    assert keep(store, covers) == frozenset()  # a model's text is not trusted to carry it
    store.set_persona(USER, "You are Alice; keep it brief.", source="operator")
    assert keep(store, covers) is None  # the operator speaks for every universal pin


def test_on_demand_beliefs_stay_out_of_the_persona() -> None:
    asked_for = universal("deploy_runbook", "Prefers the blue-green runbook.", delivery="on_demand")
    told = universal("answer_length", "Prefers short answers without preamble.")

    chosen = persona_inputs([asked_for, told])

    assert chosen == [told]
    assert "blue-green" not in deterministic_text(chosen)


class _CountingThread(StoreThread):
    """The real store thread, counting the calls it runs."""

    def __init__(self, store: BeliefStore) -> None:
        super().__init__(store)
        self.calls = 0

    async def run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return await super().run(fn, *args, **kwargs)


def test_many_users_first_summaries_are_stored_together(store: BeliefStore) -> None:
    users = [f"user-{i}" for i in range(40)]
    for user in users:
        store.create(universal(f"style_{user}", f"Prefers {user} answers.", user_id=user))
    store.set_persona("user-7", "Operator text.", source="operator")

    async def first_requests() -> tuple[dict[str, str], int]:
        thread = _CountingThread(store)
        try:
            keeper = PersonaKeeper(thread)
            served = {user: keeper.text_for(user) for user in users}
            await keeper.wait()
            return served, thread.calls
        finally:
            thread.close()

    served, calls = asyncio.run(first_requests())
    for user in users:
        stored = store.get_persona(user)
        assert stored is not None and stored.text == served[user], user
        assert stored.source == ("operator" if user == "user-7" else "deterministic")
    assert f"Prefers {users[3]} answers" in served[users[3]].replace("You prefer", "Prefers")
    assert calls < len(users) / 4, calls  # one write for a batch, not one per user
    reopened = open_store(store.path)
    try:
        assert {u: reopened.get_persona(u).text for u in users} == served  # type: ignore[union-attr]
    finally:
        reopened.close()
