"""The pre-check: turns that cannot hold a belief are settled without a model call."""

from __future__ import annotations

import asyncio

import pytest

from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from extractor.config import ExtractionConfig
from extractor.eval_set import load_conversations
from extractor.jobs import JobQueue
from extractor.outcome import JobReport
from extractor.precheck import nothing_to_remember
from extractor.worker import ExtractionWorkers
from tests.extractor.conftest import make_turn
from tests.extractor.fake_llm import FakeChatModel, extraction


@pytest.mark.parametrize(
    "text",
    ["thanks!", "perfect, thanks", "Merci beaucoup 👍", "ok danke", "top, dank je", "gracias!!"],
)
def test_an_acknowledgement_is_skipped(text: str) -> None:
    assert nothing_to_remember(make_turn(text)) == "an acknowledgement"


@pytest.mark.parametrize(
    "text",
    [
        "ok",  # may accept what the assistant proposed
        "yes",
        "thanks! can you also add tests?",
        "thanks, and we use Postgres 16",
        "thanks for 2024",
        "great, go with Kafka then",
    ],
)
def test_anything_that_might_say_something_goes_to_the_model(text: str) -> None:
    assert nothing_to_remember(make_turn(text)) is None


def test_a_turn_without_the_users_words_is_skipped() -> None:
    calls = [{"type": "function", "function": {"name": "read_file", "arguments": "{}"}}]
    assert nothing_to_remember(make_turn("", tool_calls=calls)) is not None
    assert nothing_to_remember(make_turn("  👍 ")) is not None


def test_no_turn_the_shipped_set_expects_a_belief_from_is_skipped() -> None:
    turns = [t for c in load_conversations() for t in c.turns]
    skipped = [
        t for t in turns if nothing_to_remember(make_turn(t.user, assistant_message=t.assistant))
    ]
    assert [t.user for t in skipped if t.gold] == []
    assert len(skipped) >= 8


def test_a_skipped_turn_is_done_without_a_call_and_says_why(
    store: BeliefStore, queue: JobQueue
) -> None:
    llm = FakeChatModel([extraction()])
    # Even for a model found unfit, a turn it was never asked is not a suspect empty answer.
    llm.modes.note_fitness("m", False, "wrote no belief for the canary")
    reports: list[JobReport] = []
    thread = StoreThread(store)
    workers = ExtractionWorkers(
        thread, queue, llm, ExtractionConfig(model="m", canary=False), observe=reports.append
    )

    async def go() -> None:
        await thread.run(queue.enqueue, make_turn("thank you so much!", request_id="a"))
        await thread.run(queue.enqueue, make_turn("We deploy with Helm.", request_id="b"))
        await workers.drain()

    try:
        asyncio.run(go())
    finally:
        thread.close()
    assert len(llm.calls) == 1 and "Helm" in str(llm.calls[0]["messages"][-1])
    done = {j.turn.request_id: j for j in queue.list("done")}
    assert set(done) == {"a", "b"}
    assert done["a"].raw_output == "skipped by the pre-check: an acknowledgement"
    assert done["a"].suspect is None and done["b"].suspect is not None
    assert sorted(r.mode or "" for r in reports) == ["json_schema", "skipped"]
