"""Extraction through LiteLLM against a stand-in for each behaviour of real local servers."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from extractor.config import ExtractionConfig
from extractor.jobs import Job, JobQueue
from extractor.llm import LiteLLMChatModel
from extractor.structured import CallOptions
from extractor.worker import ExtractionWorkers
from tests.extractor.conftest import make_turn
from tests.fakes.local_model import Behaviour, Brain, LocalModel, SeenRequest, empty, sql_brain

SQL_TURN = "I always write SQL keywords in upper case, please stick to that."


@dataclass
class Run:
    job: Job
    server: LocalModel
    workers: ExtractionWorkers
    llm: LiteLLMChatModel

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r.json for r in self.server.chat_requests()]

    @property
    def facts(self) -> dict[str, Any]:
        return self.llm.modes.snapshot()["openai/local"]


@pytest.fixture
def extract(store: BeliefStore, queue: JobQueue) -> Iterator[Any]:
    servers: list[LocalModel] = []
    thread = StoreThread(store)

    def go(
        behaviour: Behaviour,
        *,
        text: str = SQL_TURN,
        brain: Brain = sql_brain,
        silence_s: float = 20,
        attempts: int = 4,
        **call: Any,
    ) -> Run:
        server = LocalModel(behaviour, brain)
        server.start()
        servers.append(server)
        llm = LiteLLMChatModel(api_base=server.url, timeout=silence_s)
        config = ExtractionConfig(
            model="openai/local",
            backoff_s=0,
            breaker_threshold=1,
            max_attempts=attempts,
            canary=False,  # these tests count the requests of one job
            call=CallOptions(**call),
        )
        workers = ExtractionWorkers(thread, queue, llm, config)

        async def drain() -> None:
            try:
                await workers.drain()
            finally:
                await llm.aclose()

        job_id = queue.enqueue(make_turn(text))
        asyncio.run(drain())
        return Run(queue.get(job_id), server, workers, llm)

    try:
        yield go
    finally:
        thread.close()
        for server in servers:
            server.stop()


def landed(run: Run, store: BeliefStore) -> None:
    """The job is done, its belief written, its raw reply kept, and the breaker untouched."""
    assert run.job.status == "done", run.job.last_error
    [belief] = store.list(user_id="alice")
    assert belief.canonical_name == "sql_style"
    assert "```sql\nSELECT id FROM users;\n```" in belief.content  # the inner fence survived
    assert run.job.raw_output and "sql_style" in run.job.raw_output
    breaker = run.workers.breaker.state()
    assert breaker["state"] == "closed" and breaker["times_opened"] == 0
    assert breaker["consecutive_failures"] == 0


def test_a_server_that_refuses_json_schema_gets_json_object_with_the_schema_in_the_prompt(
    extract: Any, store: BeliefStore
) -> None:
    run = extract(Behaviour(refuse_json_schema=True))
    landed(run, store)
    first, second = run.bodies
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object"}
    assert "new_beliefs: list of objects" in second["messages"][0]["content"]  # the outline
    assert "Input should be 'text' or 'json_object'" in run.facts["refused_modes"]["json_schema"]
    assert run.facts["mode"] == "json_object"


def replay(
    server: LocalModel | str, store: BeliefStore, queue: JobQueue, texts: list[str], **config: Any
) -> ExtractionWorkers:
    """Each text as a turn, drained before the next, through one client (one mode book);
    `server`: the stand-in, or the URL of a server that is not there."""
    url = server if isinstance(server, str) else server.url
    llm = LiteLLMChatModel(api_base=url, timeout=20)
    thread = StoreThread(store)
    config = {"backoff_s": 0, "breaker_threshold": 1, "canary": False, **config}
    workers = ExtractionWorkers(
        thread, queue, llm, ExtractionConfig(model="openai/local", **config)
    )

    async def go() -> None:
        try:
            for n, text in enumerate(texts):
                queue.enqueue(make_turn(text, request_id=f"r{n}"))
                await workers.drain()
        finally:
            await llm.aclose()

    try:
        asyncio.run(go())
    finally:
        thread.close()
    return workers


def test_a_refused_mode_is_remembered_and_not_asked_again(
    store: BeliefStore, queue: JobQueue
) -> None:
    with LocalModel(Behaviour(refuse_json_schema=True)) as server:
        replay(server, store, queue, [SQL_TURN] * 3)
        kinds = [r.json["response_format"]["type"] for r in server.chat_requests()]
    assert kinds == ["json_schema", "json_object", "json_object", "json_object"]
    assert queue.counts()["done"] == 3


def test_the_wire_schema_compiles_on_a_grammar_decoder_capped_at_1000(
    extract: Any, store: BeliefStore
) -> None:
    run = extract(Behaviour(max_schema_length=1000))
    landed(run, store)
    [body] = run.bodies
    assert body["response_format"]["type"] == "json_schema"
    assert body["max_tokens"] == 1024 and body["temperature"] == 0


def test_a_grammar_that_fails_on_the_limits_gets_the_schema_without_them(
    extract: Any, store: BeliefStore
) -> None:
    run = extract(Behaviour(max_schema_length=500))
    landed(run, store)
    first, second = run.bodies
    assert "maxLength" in json.dumps(first["response_format"])
    assert second["response_format"]["type"] == "json_schema"
    assert "maxLength" not in json.dumps(second["response_format"])
    assert "rules that are going to be repeated" in run.facts["schema_limits_refused"]
    assert run.facts["refused_modes"] == {}


def test_tools_then_plain_text_when_no_response_format_is_taken(
    extract: Any, store: BeliefStore
) -> None:
    run = extract(Behaviour(refuse_json_schema=True, refuse_json_object=True))
    landed(run, store)
    assert "tools" in run.bodies[-1] and run.facts["mode"] == "tools"
    run2 = extract(
        Behaviour(refuse_json_schema=True, refuse_json_object=True, refuse_tools=True),
        text=SQL_TURN + " ",
    )
    assert run2.job.status == "done", run2.job.last_error
    last = run2.bodies[-1]
    assert "tools" not in last and "response_format" not in last
    assert run2.facts["mode"] == "text"


def test_a_template_that_drops_system_messages_is_detected_and_the_rules_move(
    extract: Any, store: BeliefStore
) -> None:
    run = extract(Behaviour(drop_system=True))
    landed(run, store)
    first, second = run.bodies
    assert first["messages"][0]["role"] == "system"
    assert all(m["role"] != "system" for m in second["messages"])
    assert "You keep the long-term memory" in second["messages"][0]["content"]
    assert "prompt tokens" in run.facts["system_messages_dropped"]


def test_the_rules_in_the_user_turn_by_setting(extract: Any, store: BeliefStore) -> None:
    run = extract(Behaviour(drop_system=True), rules="user")
    landed(run, store)
    [body] = run.bodies
    assert all(m["role"] != "system" for m in body["messages"])
    assert "You keep the long-term memory" in body["messages"][0]["content"]


def test_a_truncated_reply_is_retried_once_with_a_larger_budget(
    extract: Any, store: BeliefStore
) -> None:
    run = extract(Behaviour(truncate_below=True), max_tokens=64, max_tokens_retry=4096)
    landed(run, store)
    first, second = run.bodies
    assert (first["max_tokens"], second["max_tokens"]) == (64, 4096)
    # The retry uses the light schema: fewer fields to write.
    light = second["response_format"]["json_schema"]["schema"]
    assert "entity_updates" not in light["properties"]


def test_truncated_twice_fails_at_once_with_a_named_reason_and_the_raw_text(
    extract: Any, store: BeliefStore
) -> None:
    run = extract(Behaviour(truncate_below=True), max_tokens=16, max_tokens_retry=32)
    assert run.job.status == "failed" and run.job.attempts == 1
    assert "ExtractionTruncated" in (run.job.last_error or "")
    assert "TENURE_EXTRACT_MAX_TOKENS" in (run.job.last_error or "")
    assert run.job.raw_output and '{"new_beliefs"' in run.job.raw_output
    assert run.workers.breaker.state()["consecutive_failures"] == 0


def test_fenced_json_with_a_fenced_block_inside_and_raw_newlines_lands_in_one_call(
    extract: Any, store: BeliefStore
) -> None:
    run = extract(Behaviour(fence=True, raw_newlines=True))
    landed(run, store)
    assert len(run.bodies) == 1


def test_a_server_that_ignores_stream_and_answers_whole_is_read_whole(
    extract: Any, store: BeliefStore
) -> None:
    run = extract(Behaviour(ignore_stream=True))
    landed(run, store)
    assert len(run.bodies) == 1 and run.bodies[0]["stream"] is True


def test_a_200_with_a_garbage_body_fails_at_once_as_unusable_with_its_raw_text(
    extract: Any, store: BeliefStore
) -> None:
    run = extract(Behaviour(garbage=True))
    assert run.job.status == "failed" and run.job.attempts == 1
    assert run.job.raw_output == "<html>oops</html>"
    assert "not a chat completion" in (run.job.last_error or "")
    assert run.workers.breaker.state()["times_opened"] == 0  # threshold 1: no trip
    assert len(run.bodies) == 1


def test_a_fixed_mode_that_is_refused_fails_with_the_setting_to_change(
    extract: Any, store: BeliefStore
) -> None:
    run = extract(Behaviour(refuse_json_schema=True), output_mode="json_schema")
    assert run.job.status == "failed" and run.job.attempts == 1
    assert "OutputModeUnavailable" in (run.job.last_error or "")
    assert "TENURE_EXTRACT_OUTPUT_MODE=auto" in (run.job.last_error or "")
    assert run.workers.breaker.state()["times_opened"] == 0


def test_small_talk_through_a_base_model_that_only_chats_writes_nothing(
    store: BeliefStore, queue: JobQueue
) -> None:
    def chatty(seen: SeenRequest) -> dict[str, Any] | None:
        return empty() if "bye" in seen.turn_text else None

    with LocalModel(Behaviour(), brain=chatty) as server:
        replay(server, store, queue, ["ok thanks, bye, see you at the standup tomorrow"])
        [only] = server.chat_requests()
    assert queue.counts()["done"] == 1 and store.list(user_id="alice") == []
    assert only.json["temperature"] == 0


def test_a_context_window_too_small_is_named_with_the_setting_to_change(
    extract: Any, store: BeliefStore
) -> None:
    run = extract(Behaviour(context_window=1024))
    assert run.job.status == "failed" and run.job.attempts == 1
    error = run.job.last_error or ""
    assert "ContextWindowTooSmall" in error and "exceed context window of 1024" in error
    assert "n_ctx" in error
    assert run.workers.breaker.state()["consecutive_failures"] == 0
    assert len(run.bodies) == 1


def test_a_slow_model_that_keeps_writing_finishes_and_never_opens_the_breaker(
    extract: Any, store: BeliefStore
) -> None:
    # 200 tokens 10 ms apart: two seconds and more in all, four times the silence allowed.
    run = extract(Behaviour(tokens=200, token_gap=0.01), silence_s=0.5)
    landed(run, store)
    [body] = run.bodies
    assert body["stream"] is True
    assert len(run.server.chat_requests()[0].sent.split(b"data: ")) > 200


def test_a_retry_after_a_truncated_slow_reply_gets_the_whole_allowance_again(
    extract: Any, store: BeliefStore
) -> None:
    # Each reply trickles for a second and more: together four times the silence allowed.
    slow = Behaviour(truncate_below=True, tokens=100, token_gap=0.01)
    run = extract(slow, silence_s=0.5, max_tokens=64, max_tokens_retry=4096)
    landed(run, store)
    first, second = run.bodies
    assert (first["max_tokens"], second["max_tokens"]) == (64, 4096)


def test_a_model_that_falls_silent_mid_reply_keeps_what_arrived_and_names_the_setting(
    extract: Any, store: BeliefStore
) -> None:
    run = extract(Behaviour(tokens=50, stall_after=10), silence_s=0.5, attempts=1)
    assert run.job.status == "failed", run.job.last_error
    error = run.job.last_error or ""
    assert "ModelSilent" in error and "TENURE_EXTRACT_TIMEOUT" in error
    assert run.job.raw_output and run.job.raw_output.startswith('{"new_beliefs"')
    # The abandoned reply's connection is closed, so the server stops writing it.
    assert run.server.hung_up.wait(10)
    assert run.server.chat_requests()[0].client_hung_up
    assert "TENURE_EXTRACT_TIMEOUT" in run.facts["fell_silent"]  # on /healthz and /status
    breaker = run.workers.breaker.state()
    assert breaker["times_opened"] == 0 and breaker["consecutive_failures"] == 0


def test_a_reply_written_without_the_rules_is_never_kept(extract: Any, store: BeliefStore) -> None:
    def parrot(seen: SeenRequest) -> dict[str, Any] | None:
        """Without the rules it answers anyway: a belief copied from the user's words."""
        if seen.knows_rules:
            return sql_brain(seen)
        out = empty()
        belief = {"type": "fact", "canonical_name": "copied", "content": seen.turn_text}
        out["new_beliefs"].append({**belief, "why_it_matters": "Copied.", "confidence": 0.9})
        return out

    run = extract(Behaviour(drop_system=True), brain=parrot)
    landed(run, store)  # only the answer written with the rules is kept
    first, second = run.bodies
    assert first["messages"][0]["role"] == "system"
    assert "You keep the long-term memory" in second["messages"][0]["content"]
    assert "copied" not in (run.job.raw_output or "")


def test_a_server_that_is_not_running_is_named_unreachable_with_its_url(
    store: BeliefStore, queue: JobQueue
) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    workers = replay(url, store, queue, [SQL_TURN], max_attempts=1)
    [job] = queue.list()
    error = job.last_error or ""
    assert f"ModelUnreachable: nothing answers at {url}" in error
    assert "TENURE_EXTRACT_API_BASE" in error and "(500)" not in error
    assert workers.breaker.state()["times_opened"] == 1  # a server that is down is an outage


def test_a_slow_reply_keeps_its_job_lease_so_no_other_replica_takes_it_over(
    store: BeliefStore, queue: JobQueue
) -> None:
    mine = JobQueue(store, lease_s=1.5)  # a shared store's queue: leases count
    other = JobQueue(store, lease_s=1.5)  # another replica's, on the same table
    thread = StoreThread(store)
    taken: list[str] = []
    with LocalModel(Behaviour(tokens=100, token_gap=0.05)) as server:  # 5 s: over 3 leases
        llm = LiteLLMChatModel(api_base=server.url, timeout=20)
        config = ExtractionConfig(model="openai/local", canary=False)
        workers = ExtractionWorkers(thread, mine, llm, config)
        job_id = mine.enqueue(make_turn(SQL_TURN))

        async def go() -> None:
            extracting = asyncio.create_task(workers.drain())
            while not extracting.done():  # once it runs, the other replica looks for work
                if (await thread.run(mine.get, job_id)).status == "running":
                    taken.extend(j.id for j in await thread.run(other.claim_many, 1))
                await asyncio.wait({extracting}, timeout=0.1)
            await extracting
            await llm.aclose()

        try:
            asyncio.run(go())
        finally:
            thread.close()
    assert taken == []
    job = mine.get(job_id)
    assert job.status == "done" and job.attempts == 1, job.last_error
