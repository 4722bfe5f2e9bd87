"""The alias flywheel: names the user used for a belief become aliases that retrieval finds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from beliefs.store.belief_store import BeliefStore
from extractor.jobs import JobQueue
from extractor.llm import LiteLLMChatModel
from extractor.turn import Turn
from proxy.cli.main import main
from tests.compaction.conftest import USER, belief, compact, review
from tests.extractor.fake_llm import FakeChatModel
from tests.fakes.upstream import Chat, FakeUpstream

CLUSTER_THING = "The cluster thing keeps evicting my pods again, any idea why?"
ANSWER = "Kubernetes evicts pods when a node runs short of memory; check the requests."


def say(store: BeliefStore, user_message: str, assistant_message: str = "Noted.") -> None:
    """Write the turn into the job table exactly as the gateway does after a response."""
    turn = Turn(
        request_id="req-1",
        user_id=USER,
        scopes=["domain:code"],
        model="stand-in-model",
        user_message=user_message,
        assistant_message=assistant_message,
    )
    JobQueue(store).enqueue(turn)


def context_ids(
    home: Path, query: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> list[str]:
    monkeypatch.setenv("TENURE_HOME", str(home))
    capsys.readouterr()
    assert (
        main(["context", "--user", USER, "--scope", "domain:code", "--query", query, "--json"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    return [b["id"] for b in out["relevant"]]


def kubernetes(store: BeliefStore) -> str:
    k8s = store.create(belief("kubernetes", "Deploys everything on Kubernetes.", aliases=["k8s"]))
    store.create(belief("postgres", "Stores data in PostgreSQL.", aliases=["pg"]))
    return k8s.id


def test_the_cluster_thing_becomes_an_alias_through_the_model(
    store: BeliefStore,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    k8s = kubernetes(store)
    say(store, CLUSTER_THING, ANSWER)
    llm = FakeChatModel(
        [
            review(
                aliases=[
                    {
                        "belief_id": k8s,
                        "aliases": ["the cluster thing", "my cluster"],
                        "evidence": "the user calls Kubernetes 'the cluster thing'",
                    }
                ]
            )
        ]
    )
    report = compact(store, llm)
    assert report.aliased == 1, report.errors  # "my cluster" was never said: dropped
    prompt = llm.calls[0]["messages"][-1]["content"]
    assert CLUSTER_THING in prompt and "kubernetes" in prompt
    assert "the cluster thing" in store.get(k8s).aliases
    assert "alias flywheel" in store.history(k8s)[-1].detail["reason"]
    store.close()
    assert context_ids(db_path.parent, "the cluster thing", monkeypatch, capsys) == [k8s]


def test_a_re_explained_name_becomes_an_alias_without_a_model(store: BeliefStore) -> None:
    k8s = kubernetes(store)
    say(store, 'By "the cluster thing" I mean Kubernetes, sorry for the jargon.')
    say(store, "pg, which I call the old database, is slow today.")
    report = compact(store)
    assert report.aliased == 2
    assert "the cluster thing" in store.get(k8s).aliases
    [pg] = [b for b in store.list(user_id=USER) if b.canonical_name == "postgres"]
    assert "the old database" in pg.aliases


def test_a_name_another_belief_answers_to_is_not_taken(store: BeliefStore) -> None:
    k8s = kubernetes(store)
    say(store, "By pg I mean Kubernetes.")  # pg already names the postgres belief
    assert compact(store).aliased == 0
    assert store.get(k8s).aliases == ["k8s"]


def test_the_flywheel_through_a_real_http_model(store: BeliefStore, upstream: FakeUpstream) -> None:
    k8s = kubernetes(store)
    say(store, CLUSTER_THING, ANSWER)
    reply = review(
        aliases=[{"belief_id": k8s, "aliases": ["the cluster thing"], "evidence": "same"}]
    )
    upstream.queue(Chat(content=json.dumps(reply)))
    llm = LiteLLMChatModel(api_base=upstream.url, api_key="sk-test")
    report = compact(store, llm, model="openai/stand-in-model")
    assert report.aliased == 1, report.errors
    sent = upstream.last("/chat/completions").json
    assert sent["model"] == "stand-in-model"
    assert sent["response_format"]["json_schema"]["name"] == "cluster_review"
    assert "the cluster thing" in store.get(k8s).aliases
