"""The user's own words: harness blocks dropped, long text kept at its end, task calls and
resent messages recognised — as units and through the gateway."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from beliefs.model.models import Belief
from proxy.gateway.harness import QUERY_CHARS, keep_end, strip_harness, user_words
from proxy.gateway.side_calls import SeenMessages, is_task_call
from tests.fakes.upstream import FakeUpstream
from tests.proxy.conftest import Gateway
from tests.proxy.gateway.gateway_reads import corpus, pending_turns

REMINDER = (
    "<system-reminder>\n" + "Context the agent adds on every turn. " * 170 + "\n</system-reminder>"
)


def test_harness_blocks_go_whole_and_the_users_words_stay() -> None:
    text = (
        f"{REMINDER}\n<command-name>/review</command-name>\n<command-args></command-args>\n"
        "<environment_details>\n# Open tabs\nsrc/app.ts\n</environment_details>\n"
        "Why does the <Invoice> component re-render?"
    )
    assert strip_harness(text) == "Why does the <Invoice> component re-render?"
    attrs = '<system-reminder origin="hook">x</system-reminder>keep'
    assert strip_harness(attrs) == "keep"
    # A tag that only begins like one in the list is the user's.
    assert strip_harness("<system-reminders>mine</system-reminders>") == (
        "<system-reminders>mine</system-reminders>"
    )
    assert strip_harness("plain text") == "plain text"


def test_the_end_of_long_text_is_kept_from_a_word_boundary() -> None:
    text = "start " + "word " * 500 + "the question at the end?"
    kept = keep_end(text, 100)
    assert kept.endswith("the question at the end?") and len(kept) <= 100
    assert not kept.startswith("ord")
    assert keep_end("short", 100) == "short"


def test_the_query_is_the_prompt_after_kilobytes_of_reminders() -> None:
    query = user_words(f"{REMINDER}\n{REMINDER}\nWhich Mongoose schema fits invoices?")
    assert query == "Which Mongoose schema fits invoices?"
    long_paste = "x " * 2000 + "so what about kubernetes?"
    assert user_words(long_paste).endswith("so what about kubernetes?")
    assert len(user_words(long_paste)) <= QUERY_CHARS


def test_task_calls_are_recognised_by_their_opening() -> None:
    assert is_task_call("### Task:\nGenerate a concise title ...")
    assert is_task_call("  ### task: suggest tags")
    assert is_task_call(
        "<session>hi</session>",
        ["x-billing", "Generate a concise, sentence-case title (3-7 words) for"],
    )
    assert not is_task_call("Please do this ### Task: later in the text")
    assert not is_task_call("Generate a migration for the users table")


def test_a_message_is_first_seen_once_per_user_and_agent() -> None:
    seen = SeenMessages(size=2)
    assert seen.first_time("alice", None, "hello")
    assert not seen.first_time("alice", None, " hello ")
    assert seen.first_time("alice", "coder", "hello")
    assert seen.first_time("bob", None, "hello")  # evicts the oldest: size 2
    assert seen.first_time("alice", None, "hello")
    assert seen.first_time("alice", None, "")  # nothing said is never a repeat


CORPUS = corpus("alice")
MONGOOSE = Belief(
    user_id="alice",
    type="decision",
    canonical_name="database_driver",
    rejected_alternatives=["mongoose"],
    content="Uses the raw MongoDB driver.",
    scope=["user:universal"],
)
ALICE = {"X-Tenure-User": "alice"}


def chat(gw: Gateway, messages: list[dict[str, Any]]) -> httpx.Response:
    body = {"model": "claude-x", "max_tokens": 50, "messages": messages}
    resp = httpx.post(gw.v1 + "/messages", json=body, headers=ALICE, timeout=10)
    assert resp.status_code == 200, resp.text
    return resp


def test_reminder_parts_before_the_prompt_do_not_hide_it_from_search_or_extraction(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, MONGOOSE])
    parts = [
        {"type": "text", "text": REMINDER},
        {"type": "text", "text": REMINDER},
        {"type": "text", "text": "Suggest a good Mongoose schema for invoices"},
    ]
    resp = chat(gw, [{"role": "user", "content": parts}])
    assert resp.headers["x-tenure-injected"] == "1"
    assert (
        "Uses the raw MongoDB driver."
        in upstream.last("/messages").json["messages"][0]["content"][-1]["text"]
    )
    gw.settle(lambda: len(pending_turns(gw)) == 1)
    assert pending_turns(gw)[0]["user_message"] == "Suggest a good Mongoose schema for invoices"


def test_a_resent_user_message_is_extracted_once(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway()
    messages = [{"role": "user", "content": "We deploy with Nomad, not Kubernetes."}]
    chat(gw, messages)
    chat(gw, messages)  # a retry or a regenerate: no new user words, no job
    gw.settle()
    [turn] = pending_turns(gw)
    assert turn["user_message"] == "We deploy with Nomad, not Kubernetes."


def test_a_task_call_gets_memory_but_no_job(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    gw = make_gateway(beliefs=[*CORPUS, MONGOOSE])
    task = "### Task:\nSuggest tags for the chat.\n<chat_history>\nUSER: a mongoose schema?\n"
    resp = httpx.post(
        gw.v1 + "/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": task}]},
        headers=ALICE,
        timeout=10,
    )
    assert resp.headers["x-tenure-injected"] == "1"
    gw.settle()
    assert pending_turns(gw) == []
