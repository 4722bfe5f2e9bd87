"""The canary: a model that cannot do the job is reported unfit before it fills the queue with
"done, wrote 0"; a model that can is asked once and trusted."""

from __future__ import annotations

from typing import Any

from beliefs.store.belief_store import BeliefStore
from extractor.canary import CANARY_USER
from extractor.jobs import JobQueue
from tests.extractor.test_local_models import SQL_TURN, replay
from tests.fakes.local_model import Behaviour, LocalModel, SeenRequest, empty

TURNS = [SQL_TURN, "We deploy with Nomad, not Kubernetes.", "ok thanks, bye, see you tomorrow"]


def canary_asked(server: LocalModel) -> list[int]:
    """The positions of the canary among the requests the server received."""
    return [
        n for n, r in enumerate(server.chat_requests()) if CANARY_USER in r.body.decode("utf-8")
    ]


def test_a_base_model_that_answers_every_turn_empty_is_unfit_and_its_jobs_suspect(
    store: BeliefStore, queue: JobQueue
) -> None:
    def base_model(seen: SeenRequest) -> dict[str, Any] | None:
        """Under a JSON grammar it copies the small-talk example's result, whatever the turn."""
        return empty()

    behaviour = Behaviour(refuse_json_schema=True)
    with LocalModel(behaviour, brain=base_model, canary=None) as server:
        workers = replay(server, store, queue, TURNS, canary=True)
        # Before the first job: refused as json_schema, asked as json_object, then once more
        # with the rules in the user turn (in case its template dropped them).
        assert canary_asked(server) == [0, 1, 2]
    facts = workers.breaker_state()["models"]["openai/local"]
    assert facts["fit"] is False
    assert "wrote no belief for a turn that states a lasting fact" in facts["fitness"]
    jobs = queue.list()
    assert [j.status for j in jobs] == ["done"] * 3 and all(not j.written_ids for j in jobs)
    for job in jobs:
        assert job.suspect and "failed the canary" in job.suspect
    assert queue.get(jobs[0].id).suspect == jobs[0].suspect  # stored, not only in memory


def test_a_model_that_copies_the_example_is_unfit_with_what_it_wrote(
    store: BeliefStore, queue: JobQueue
) -> None:
    def copier(seen: SeenRequest) -> dict[str, Any] | None:
        out = empty()
        belief = {"type": "decision", "canonical_name": "cookbook_units", "confidence": 0.9}
        belief |= {"content": "Uses metric units only.", "why_it_matters": "Use grams."}
        out["new_beliefs"].append(belief)
        return out

    with LocalModel(Behaviour(), brain=copier, canary=None) as server:
        workers = replay(server, store, queue, [SQL_TURN], canary=True)
    facts = workers.breaker_state()["models"]["openai/local"]
    assert facts["fit"] is False and "(cookbook_units)" in facts["fitness"]
    [job] = queue.list()
    assert job.written_ids and job.suspect is None  # it wrote something: not an empty result


def test_a_fit_model_is_asked_the_canary_once_and_its_empty_jobs_are_trusted(
    store: BeliefStore, queue: JobQueue
) -> None:
    def chatty(seen: SeenRequest) -> dict[str, Any] | None:
        return empty()

    with LocalModel(Behaviour(), brain=chatty) as server:  # the canary answered right
        workers = replay(server, store, queue, TURNS, canary=True)
        assert canary_asked(server) == [0]
        assert len(server.chat_requests()) == 1 + len(TURNS)
    facts = workers.breaker_state()["models"]["openai/local"]
    assert facts["fit"] is True
    assert all(j.status == "done" and j.suspect is None for j in queue.list())


def test_no_canary_when_it_is_turned_off(store: BeliefStore, queue: JobQueue) -> None:
    with LocalModel(Behaviour()) as server:
        workers = replay(server, store, queue, [SQL_TURN], canary=False)
        assert canary_asked(server) == []
    assert workers.breaker_state()["models"]["openai/local"]["fit"] is None


def test_a_dropped_system_message_is_found_by_the_canary_when_no_tokens_are_counted(
    store: BeliefStore, queue: JobQueue
) -> None:
    # llama-cpp-python's gemma template drops system messages, and its streams report no usage.
    with LocalModel(Behaviour(drop_system=True, stream_usage=False)) as server:
        workers = replay(server, store, queue, [SQL_TURN], canary=True)
        last = server.chat_requests()[-1].json
    facts = workers.breaker_state()["models"]["openai/local"]
    assert facts["fit"] is True
    assert "only with the rules in the user turn" in facts["system_messages_dropped"]
    [job] = queue.list()
    assert job.status == "done" and job.written_ids, job.last_error
    assert all(m["role"] != "system" for m in last["messages"])  # the job's call: rules moved
