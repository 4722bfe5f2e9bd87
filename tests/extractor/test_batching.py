"""With a backlog, pending turns of one conversation are extracted in one model call."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from extractor.errors import ModelUnreachable
from extractor.jobs import JobQueue
from extractor.turn import Turn
from extractor.worker import ExtractionWorkers
from tests.extractor.conftest import make_turn
from tests.extractor.fake_llm import FakeChatModel, extraction, new_belief, update
from tests.extractor.test_worker import settings


@pytest.fixture
def thread(store: BeliefStore) -> Iterator[StoreThread]:
    thread = StoreThread(store)
    try:
        yield thread
    finally:
        thread.close()


def drain(workers: ExtractionWorkers) -> int:
    async def go() -> int:
        return await workers.drain()

    return asyncio.run(go())


def workers_for(
    thread: StoreThread, queue: JobQueue, llm: FakeChatModel, **kw: Any
) -> ExtractionWorkers:
    return ExtractionWorkers(thread, queue, llm, settings(**kw))


def conversation(*texts: str, **kw: Any) -> list[Turn]:
    return [make_turn(text, request_id=f"req-{n}", **kw) for n, text in enumerate(texts)]


THREE = (
    "Our billing service runs on PostgreSQL.",
    "We deploy it with Helm on our own cluster.",
    "Invoices are always issued in euros.",
)


def test_three_turns_of_one_conversation_share_a_call(
    store: BeliefStore, queue: JobQueue, thread: StoreThread
) -> None:
    llm = FakeChatModel()
    llm.push(
        extraction(
            new_beliefs=[
                new_belief("billing_database", "Billing runs on PostgreSQL."),
                new_belief("billing_deploys", "Billing is deployed with Helm."),
                new_belief("invoice_currency", "Invoices are issued in euros."),
            ]
        ),
        extraction(new_beliefs=[new_belief("docs_tool", "Docs are written in Sphinx.")]),
    )
    # One at a time, as the proxy enqueues them: the queue's order is the order they came.
    turns = [*conversation(*THREE), make_turn("Our docs use Sphinx.", agent_id="ide")]
    ids = [queue.enqueue(turn) for turn in turns]

    assert drain(workers_for(thread, queue, llm)) == 4

    assert len(llm.calls) == 2
    batched = llm.calls[0]["messages"][-1]["content"]
    places = [batched.index(text) for text in THREE]
    assert places == sorted(places)  # oldest first
    assert "Our docs use Sphinx." not in batched
    assert [queue.get(i).status for i in ids] == ["done"] * 4
    names = {b.canonical_name for b in store.list(user_id="alice")}
    assert {"billing_database", "billing_deploys", "invoice_currency", "docs_tool"} <= names
    lead = queue.get(ids[2])
    assert sorted(queue.get(ids[0]).written_ids) == sorted(lead.written_ids)
    assert ids[2] in (queue.get(ids[0]).raw_output or "")


def test_a_later_turn_of_a_batch_corrects_an_earlier_one(
    store: BeliefStore, queue: JobQueue, thread: StoreThread
) -> None:
    llm = FakeChatModel()
    llm.push(
        extraction(new_beliefs=[new_belief("billing_database", "Billing runs on PostgreSQL.")])
    )
    queue.enqueue(make_turn("Billing runs on PostgreSQL.", request_id="req-first"))
    drain(workers_for(thread, queue, llm))
    (old,) = [b for b in store.list(user_id="alice") if b.canonical_name == "billing_database"]
    llm.push(
        extraction(
            belief_updates=[
                update(
                    "superseded",
                    belief_id=old.id,
                    canonical_name="billing_database",
                    new_content="Billing runs on MySQL.",
                    reason="the user switched",
                )
            ],
        )
    )
    first, *later = conversation(
        "Billing still runs on PostgreSQL.",
        "It serves about a hundred invoices a day.",
        "Correction: billing moved to MySQL, not PostgreSQL.",
    )
    # Only the first turn was shown the belief; the batch's answer lands with all it was shown.
    for turn in [first.model_copy(update={"injected_ids": [old.id]}), *later]:
        queue.enqueue(turn)

    drain(workers_for(thread, queue, llm))

    assert len(llm.calls) == 2
    batched = llm.calls[1]["messages"][-1]["content"]
    assert old.id in batched  # the belief the first turn touched is known to the batch
    assert batched.index("still runs") < batched.index("Correction")
    live = [b for b in store.list(user_id="alice") if b.canonical_name == "billing_database"]
    assert [b.content for b in live] == ["Billing runs on MySQL."]
    assert store.get(old.id).superseded_by == live[0].id


def test_a_failed_batched_call_asks_each_turn_alone(
    store: BeliefStore, queue: JobQueue, thread: StoreThread
) -> None:
    llm = FakeChatModel()
    llm.push(
        ModelUnreachable("nothing listening"),
        *(extraction(new_beliefs=[new_belief(f"fact_{n}", f"Fact {n} holds.")]) for n in range(3)),
    )
    ids = [queue.enqueue(turn) for turn in conversation(*THREE)]

    drain(workers_for(thread, queue, llm))

    assert len(llm.calls) == 4  # the batch, then one call per turn
    assert all(THREE[n] in llm.calls[n + 1]["messages"][-1]["content"] for n in range(3))
    assert [queue.get(i).status for i in ids] == ["done"] * 3
    names = {b.canonical_name for b in store.list(user_id="alice")}
    assert {"fact_0", "fact_1", "fact_2"} <= names


def test_no_batch_without_a_backlog(
    store: BeliefStore, queue: JobQueue, thread: StoreThread
) -> None:
    llm = FakeChatModel()
    llm.default = extraction()
    ids = [queue.enqueue(turn) for turn in conversation(*THREE)]

    drain(workers_for(thread, queue, llm, extract_workers=3))

    assert len(llm.calls) == 3
    assert [queue.get(i).status for i in ids] == ["done"] * 3


def test_batches_are_capped_by_turns_and_characters(
    store: BeliefStore, queue: JobQueue, thread: StoreThread
) -> None:
    llm = FakeChatModel()
    llm.default = extraction()
    long = "We keep every invoice for ten years. " * 40
    for turn in conversation(*THREE, *THREE, long, long, long):
        queue.enqueue(turn)

    drain(workers_for(thread, queue, llm, extract_batch_turns=4, extract_batch_chars=2_000))

    sizes = [call["messages"][-1]["content"].count("<user>") for call in llm.calls]
    assert sizes == [4, 3, 1, 1]
