from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from beliefs.model.models import Belief, utcnow
from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from extractor.breaker import CircuitBreaker
from extractor.config import ExtractionConfig
from extractor.conflicts import ConflictBook
from extractor.errors import ConflictStateError, InvalidResolution
from extractor.jobs import JobQueue
from extractor.worker import ExtractionWorkers
from proxy.runtime import chat_model_for, extraction_config
from proxy.settings import Settings
from tests.extractor.conftest import make_turn
from tests.extractor.fake_llm import FakeChatModel, extraction, new_belief, update

SECRET = "sk-proj-Zx9aQ2mP7rT4wL8kN3vB0000"


@dataclass
class Rig:
    store: BeliefStore
    queue: JobQueue
    llm: FakeChatModel
    workers: ExtractionWorkers

    def drain(self) -> int:
        async def go() -> int:
            return await self.workers.drain()

        return asyncio.run(go())


def gateway_settings(**kw: Any) -> Settings:
    base: dict[str, Any] = {
        "extract_backoff_s": 0.0,
        "extract_max_attempts": 3,
        "breaker_threshold": 5,
        "breaker_cooldown_s": 60,
        "upstream_url": "http://127.0.0.1:9/v1",
    }
    base.update(kw)
    return Settings.load(environ={"TENURE_HOME": "/nonexistent-tenure-home"}, **base)


def settings(**kw: Any) -> ExtractionConfig:
    return extraction_config(gateway_settings(**kw))


def model_for(conf: Settings, turn: Any) -> str:
    return extraction_config(conf).model_for(turn)


@pytest.fixture
def rig(store: BeliefStore, queue: JobQueue) -> Iterator[Rig]:
    thread = StoreThread(store)
    llm = FakeChatModel()
    workers = ExtractionWorkers(thread, queue, llm, settings())
    try:
        yield Rig(store, queue, llm, workers)
    finally:
        thread.close()


def live(store: BeliefStore) -> list[Belief]:
    return store.list(user_id="alice")


def test_a_turn_becomes_a_pending_extracted_belief(rig: Rig) -> None:
    rig.llm.push(
        extraction(
            new_beliefs=[
                new_belief(
                    "database_driver",
                    "Uses the raw MongoDB driver.",
                    aliases=["mongo driver"],
                    rejected_alternatives=["mongoose"],
                )
            ]
        )
    )
    job_id = rig.queue.enqueue(make_turn())
    assert rig.drain() == 1
    [belief] = live(rig.store)
    assert belief.canonical_name == "database_driver"
    assert belief.aliases == ["mongo driver"] and belief.rejected_alternatives == ["mongoose"]
    assert belief.why_it_matters and belief.scope == ["project:billing"]
    assert belief.review_state == "pending" and belief.source_type == "extracted"
    assert belief.provenance["request_id"] == "req-1"
    assert belief.provenance["model"] == "openai/small-model"
    job = rig.queue.get(job_id)
    assert job.status == "done" and job.written_ids == [belief.id]
    [call] = rig.llm.calls
    assert call["model"] == "openai/small-model"
    assert "raw MongoDB driver" in call["messages"][-1]["content"]


def test_a_later_turn_supersedes_by_canonical_name_and_the_chain_grows(rig: Rig) -> None:
    rig.llm.push(
        extraction(new_beliefs=[new_belief("cache_store", "Uses Redis.", aliases=["cache"])]),
        extraction(
            belief_updates=[
                update(
                    "superseded",
                    belief_id="b-garbled",
                    canonical_name="cache_store",
                    new_content="Uses Valkey.",
                    reason="switched to Valkey",
                )
            ]
        ),
    )
    rig.queue.enqueue(make_turn("Our cache is Redis."))
    rig.drain()
    [old] = live(rig.store)
    rig.queue.enqueue(make_turn("We moved the cache to Valkey.", injected_ids=[old.id]))
    rig.drain()
    # The second prompt showed the model the belief it touched.
    assert old.id in rig.llm.calls[1]["messages"][-1]["content"]
    [head] = live(rig.store)
    assert head.content == "Uses Valkey." and head.aliases == ["Valkey", "cache"]
    chain = rig.store.chain(head.id)
    assert [b.id for b in chain] == [old.id, head.id]
    assert (
        chain[0].superseded_by == head.id and chain[0].invalidation_reason == "switched to Valkey"
    )


def test_a_contradiction_opens_a_conflict_and_each_resolution_works(rig: Rig) -> None:
    rig.llm.push(extraction(new_beliefs=[new_belief("editor", "Uses Vim.")]))
    for text in ("I use Emacs.", "Actually Emacs!", "Emacs, really."):
        # Twice: the proposal names a live belief the prompt did not show, so the model is
        # asked again with it listed; it insists, and a conflict opens.
        proposal = extraction(new_beliefs=[new_belief("editor", f"Uses Emacs ({text}).")])
        rig.llm.push(proposal, proposal)
    for text in ("I use Vim.", "I use Emacs.", "Actually Emacs!", "Emacs, really."):
        rig.queue.enqueue(make_turn(text))
        rig.drain()
    book = ConflictBook(rig.store)
    conflicts = book.list(status="open")
    assert len(conflicts) == 3
    [vim] = live(rig.store)
    assert {c.existing_id for c in conflicts} == {vim.id}
    assert vim.content == "Uses Vim."  # never silently absorbed

    take, keep, both = sorted(conflicts, key=lambda c: c.created_at)
    with pytest.raises(InvalidResolution, match="keep_existing, take_new, keep_both"):
        book.resolve(keep.id, "whatever")
    kept = book.resolve(keep.id, "keep_existing")
    assert kept.status == "resolved" and [b.id for b in live(rig.store)] == [vim.id]

    both_done = book.resolve(both.id, "keep_both")
    names = sorted(b.canonical_name for b in live(rig.store))
    assert names == ["editor", "editor_2"] and both_done.new_id is not None

    taken = book.resolve(take.id, "take_new")
    head = rig.store.get(taken.new_id or "")
    assert head.content.startswith("Uses Emacs") and head.review_state == "confirmed"
    assert rig.store.get(vim.id).superseded_by == head.id
    with pytest.raises(ConflictStateError):
        book.resolve(take.id, "take_new")


def test_a_secret_reaches_neither_the_prompt_nor_the_store(rig: Rig) -> None:
    rig.llm.push(
        extraction(
            new_beliefs=[
                new_belief(
                    "deploy_key",
                    f"Deploys with the key {SECRET}.",
                    aliases=[SECRET],
                    why_it_matters=f"Use {SECRET} when deploying.",
                )
            ]
        )
    )
    rig.queue.enqueue(make_turn(f"Deploy with {SECRET} please", assistant_message=f"ok {SECRET}"))
    rig.drain()
    assert SECRET not in str(rig.llm.calls)
    for (table,) in rig.store.execute(
        "SELECT table_name FROM information_schema.tables"
    ).fetchall():
        assert SECRET not in str(rig.store.execute(f'SELECT * FROM "{table}"').fetchall()), table
    [belief] = live(rig.store)
    assert "[REDACTED]" in belief.content


def test_garbage_output_fails_the_job_with_the_raw_text_and_writes_nothing(rig: Rig) -> None:
    rig.llm.push("Sure! Here are some beliefs: none", "I really can't produce JSON")
    job_id = rig.queue.enqueue(make_turn())
    rig.drain()
    job = rig.queue.get(job_id)
    assert job.status == "failed" and job.attempts == 1
    assert "Here are some beliefs" in (job.raw_output or "")
    assert "can't produce JSON" in (job.raw_output or "")
    assert "invalid output" in (job.last_error or "")
    assert live(rig.store) == []
    assert rig.workers.breaker_state()["state"] == "closed"


def test_invalid_items_are_skipped_with_reasons_and_the_rest_lands(rig: Rig) -> None:
    rig.llm.push(
        extraction(
            new_beliefs=[
                new_belief("good", "A good belief."),
                new_belief("weak", "A guess.", confidence=0.1),
                new_belief("bad", "x", type="feeling"),
            ],
            belief_updates=[update("reinforced", canonical_name="ghost")],
        )
    )
    job_id = rig.queue.enqueue(make_turn())
    rig.drain()
    job = rig.queue.get(job_id)
    assert job.status == "done" and len(job.written_ids) == 1
    reasons = " | ".join(f"{s.item}: {s.reason}" for s in job.skipped)
    assert "weak" in reasons and "below 0.35" in reasons
    assert "bad" in reasons and "type" in reasons
    assert "ghost" in reasons
    assert [b.canonical_name for b in live(rig.store)] == ["good"]


def test_call_failures_retry_with_backoff_then_park(rig: Rig) -> None:
    rig.llm.push(ConnectionError("refused"), ConnectionError("refused"), ConnectionError("no"))
    job_id = rig.queue.enqueue(make_turn())
    assert rig.drain() == 3  # backoff of 0 s: each retry is due at once
    job = rig.queue.get(job_id)
    assert job.status == "failed" and job.attempts == 3
    assert job.last_error == "ConnectionError: no"
    assert rig.queue.retry(job_id).status == "pending"
    rig.llm.push(extraction(new_beliefs=[new_belief("x", "y")]))
    rig.drain()
    assert rig.queue.get(job_id).status == "done"


def test_backoff_grows_exponentially_until_attempts_run_out(rig: Rig) -> None:
    workers = ExtractionWorkers(
        rig.workers.thread,
        rig.queue,
        rig.llm,
        settings(extract_backoff_s=2, extract_backoff_max_s=5, extract_max_attempts=4),
    )
    now = utcnow()
    delays = [(workers.retry_at(n, now) or now) - now for n in (1, 2, 3)]
    assert [d.total_seconds() for d in delays] == [2, 4, 5]
    assert workers.retry_at(4, now) is None


def test_an_open_breaker_makes_jobs_wait_not_fail(rig: Rig) -> None:
    clock = [0.0]
    breaker = CircuitBreaker(2, 30, clock=lambda: clock[0])
    workers = ExtractionWorkers(
        rig.workers.thread, rig.queue, rig.llm, settings(extract_max_attempts=10), breaker=breaker
    )
    rig.llm.push(TimeoutError(), TimeoutError())
    first = rig.queue.enqueue(make_turn())
    second = rig.queue.enqueue(make_turn("another turn"))

    async def go() -> int:
        return await workers.drain()

    assert asyncio.run(go()) == 2
    assert workers.breaker_state()["state"] == "open"
    assert asyncio.run(go()) == 0  # nothing is claimed while open
    assert {rig.queue.get(j).status for j in (first, second)} == {"pending"}
    assert len(rig.llm.calls) == 2
    clock[0] += 31
    rig.llm.push(extraction(), extraction())
    assert asyncio.run(go()) == 2
    assert {rig.queue.get(j).status for j in (first, second)} == {"done"}
    assert workers.breaker_state()["state"] == "closed"


def test_started_workers_wake_on_enqueue_and_stop_cleanly(rig: Rig) -> None:
    rig.llm.default = extraction(new_beliefs=[new_belief("x", "y")])

    async def go() -> str:
        workers = ExtractionWorkers(rig.workers.thread, rig.queue, rig.llm, settings(), poll_s=30)
        await workers.start()
        job_id = await workers.thread.run(rig.queue.enqueue, make_turn())
        for _ in range(200):
            if (await workers.thread.run(rig.queue.get, job_id)).status == "done":
                break
            await asyncio.sleep(0.01)
        assert workers.breaker_state()["workers"] == 1
        await workers.stop()
        return job_id

    job_id = asyncio.run(go())
    assert rig.queue.get(job_id).status == "done"


def test_stopping_mid_call_puts_the_job_back(rig: Rig) -> None:
    rig.llm.gate = asyncio.Event()  # never released: the call hangs

    async def go() -> str:
        workers = ExtractionWorkers(rig.workers.thread, rig.queue, rig.llm, settings())
        await workers.start()
        job_id = await workers.thread.run(rig.queue.enqueue, make_turn())
        while not rig.llm.calls:
            await asyncio.sleep(0.01)
        await workers.stop()
        return job_id

    job_id = asyncio.run(go())
    job = rig.queue.get(job_id)
    assert job.status == "pending" and job.attempts == 0
    assert live(rig.store) == []


def test_model_defaults_to_the_turns_own_model_at_the_upstream() -> None:
    plain = gateway_settings(upstream_api_key="sk-up")
    assert model_for(plain, make_turn()) == "openai/small-model"
    llm = chat_model_for(plain)
    assert (llm.api_base, llm.api_key) == ("http://127.0.0.1:9/v1", "sk-up")
    own = gateway_settings(
        extract_model="anthropic/claude-haiku",
        extract_api_base="http://127.0.0.1:8/v1",
        extract_api_key="k",
    )
    assert model_for(own, make_turn()) == "anthropic/claude-haiku"
    llm = chat_model_for(own)
    assert (llm.api_base, llm.api_key) == ("http://127.0.0.1:8/v1", "k")


def test_the_prompt_shows_beliefs_the_turn_text_finds_in_its_scopes(rig: Rig) -> None:
    k8s = rig.store.create(
        Belief(
            user_id="alice",
            canonical_name="cluster",
            content="Runs on Kubernetes.",
            aliases=["k8s"],
            scope=["project:billing"],
        )
    )
    elsewhere = rig.store.create(
        Belief(
            user_id="alice",
            canonical_name="cluster",
            content="Runs on Nomad.",
            aliases=["k8s"],
            scope=["project:other"],
        )
    )
    for n in range(8):  # a corpus big enough for the alias to be a rare, telling term
        rig.store.create(Belief(user_id="alice", canonical_name=f"filler_{n}", content="x"))
    rig.llm.push(extraction())
    rig.queue.enqueue(make_turn("Deploy the billing API to k8s please."))
    rig.drain()
    prompt = rig.llm.calls[0]["messages"][-1]["content"]
    assert k8s.id in prompt and elsewhere.id not in prompt


def test_a_model_the_gateway_routes_through_litellm_is_extracted_there_too() -> None:
    routed = gateway_settings(
        models={"claude-x": {"litellm_model": "anthropic/claude-x", "api_base": None}}
    )
    assert model_for(routed, make_turn(model="claude-x")) == "anthropic/claude-x"
    assert model_for(routed, make_turn()) == "openai/small-model"
    assert chat_model_for(routed).routes["anthropic/claude-x"] == (None, None)


def test_an_anthropic_turn_is_extracted_by_its_model_at_the_anthropic_upstream() -> None:
    conf = gateway_settings(
        anthropic_upstream_url="https://api.anthropic.com/v1", anthropic_upstream_api_key="ak"
    )
    assert model_for(conf, make_turn(model="claude-x", wire="anthropic")) == "anthropic/claude-x"
    assert chat_model_for(conf).routes["anthropic/"] == ("https://api.anthropic.com", "ak")


def busy_workers(rig: Rig, **options: Any) -> ExtractionWorkers:
    return ExtractionWorkers(
        rig.workers.thread, rig.queue, rig.llm, settings(), poll_s=0.05, **options
    )


def test_extraction_waits_while_live_requests_are_busy_but_never_starves(rig: Rig) -> None:
    rig.llm.default = extraction(new_beliefs=[new_belief("x", "y")])
    busy = {"now": True}

    async def done(workers: ExtractionWorkers, job_id: str) -> None:
        while (await workers.thread.run(rig.queue.get, job_id)).status != "done":
            await asyncio.sleep(0.01)

    async def go() -> tuple[str, int]:
        # A deferral far longer than the test: whatever the machine's load, the job is seen
        # waiting while the requests are busy, and runs once they are done.
        workers = busy_workers(rig, busy=lambda: busy["now"], max_defer_s=3600)
        await workers.start()
        job_id = await workers.thread.run(rig.queue.enqueue, make_turn())
        while workers.deferrals < 1:
            await asyncio.sleep(0.01)
        while_busy = (await workers.thread.run(rig.queue.get, job_id)).status
        calls_while_busy = len(rig.llm.calls)
        busy["now"] = False
        await done(workers, job_id)
        await workers.stop()
        # A short bound on each deferral: a job runs although the requests never stop.
        bounded = busy_workers(rig, busy=lambda: True, max_defer_s=0.05)
        await bounded.start()
        await done(bounded, await bounded.thread.run(rig.queue.enqueue, make_turn(request_id="r2")))
        await bounded.stop()
        return while_busy, calls_while_busy

    assert asyncio.run(go()) == ("pending", 0)


def test_under_a_load_that_never_ends_the_floor_keeps_extraction_going(rig: Rig) -> None:
    rig.llm.default = extraction()

    async def go(min_rate: float, polls: int) -> int:
        # live requests in flight all the time; the queue is the rig's, so the second run
        # also finds the ten jobs the first one left pending
        workers = busy_workers(rig, busy=lambda: True, max_defer_s=60, min_rate=min_rate)
        await workers.start()
        for n in range(10):
            await workers.thread.run(rig.queue.enqueue, make_turn(request_id=f"{min_rate}-{n}"))
        for _ in range(polls):
            counts = await workers.thread.run(rig.queue.counts)
            if counts["pending"] == counts["running"] == 0:
                break
            await asyncio.sleep(0.01)
        await workers.stop()
        return (await workers.thread.run(rig.queue.counts))["done"]

    assert asyncio.run(go(min_rate=0, polls=300)) == 0  # without a floor it yields the whole time
    # with one, every job is done: the first run's ten and this run's ten
    assert asyncio.run(go(min_rate=50, polls=6000)) == 20


def test_a_full_backlog_parks_its_oldest_jobs(rig: Rig) -> None:
    rig.llm.default = extraction()

    async def go() -> dict[str, int]:
        workers = ExtractionWorkers(
            rig.workers.thread, rig.queue, rig.llm, settings(), poll_s=0.05, backlog_max=3
        )
        for n in range(8):
            await workers.thread.run(rig.queue.enqueue, make_turn(request_id=f"b-{n}"))
        await workers.run_once()
        return await workers.thread.run(rig.queue.counts)

    counts = asyncio.run(go())
    assert counts["failed"] == 5 and counts["done"] + counts["pending"] == 3
    assert rig.queue.shed == 5
