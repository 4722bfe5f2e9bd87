"""The evaluation harness, scored against scripted models whose answers are known."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from beliefs.model.errors import BeliefError
from extractor.eval_set import load_conversations
from extractor.prompts import EXAMPLE_TEXTS
from tests.fakes.gamer_model import regex_gamer
from tests.fakes.local_model import Behaviour
from tests.fakes.reference_model import reference_brain, score_brain

SHIPPED = load_conversations()


score = score_brain


def test_the_shipped_set_covers_the_people_and_kinds_of_turn_it_promises() -> None:
    assert len(SHIPPED) >= 60
    assert sum(len(c.turns) > 1 for c in SHIPPED) * 2 >= len(SHIPPED)
    personas = Counter(c.persona for c in SHIPPED)
    assert len(personas) >= 8 and {"developer", "writer", "researcher"} <= set(personas)
    kinds = Counter(k for c in SHIPPED for k in c.kinds)
    for kind in ("correction", "rejection", "chit-chat", "mixed languages", "open question"):
        assert kinds[kind] >= 5, kind
    assert sum(c.chit_chat for c in SHIPPED) >= 10
    assert sum(len(c.supersessions) for c in SHIPPED) >= 12
    assert sum(len(c.turns) > 1 and bool(c.supersessions) for c in SHIPPED) >= 12
    assert all(c.probes or c.chit_chat or c.questions for c in SHIPPED)


def test_every_probe_asks_for_words_the_user_never_wrote() -> None:
    # A model that stores the turn's text (or the assistant's) can meet no probe: each needs
    # at least one term, and each open question all of its terms, in other words.
    for conversation in SHIPPED:
        said = " ".join(f"{t.user} {t.assistant}" for t in conversation.turns).casefold()

        def unsaid(term: str, said: str = said) -> bool:
            return not any(alt.strip().casefold() in said for alt in term.split("|"))

        for probe in conversation.probes:
            assert any(unsaid(term) for term in probe.says), (conversation.id, probe.query)
        for fix in conversation.supersessions:
            assert any(unsaid(term) for term in fix.new), (conversation.id, fix.new)
        for question in conversation.questions:
            assert all(unsaid(term) for term in question.says), (conversation.id, question)


def test_a_model_that_answers_the_gold_scores_full_marks_on_the_shipped_set() -> None:
    # Also proves every probe of the set can be met by retrieval over the gold beliefs.
    result = score(SHIPPED, reference_brain(SHIPPED), Behaviour(prompt_cache=True))
    missed = [f"{d.id}: {d.missed}" for d in result.details if d.missed]
    assert missed == []
    assert result.facts_found == result.facts_expected >= 75
    assert result.rejected_captured == result.rejected_expected >= 15
    assert result.chosen_rejected == 0
    assert result.supersessions_detected == result.supersessions_expected >= 12
    assert result.superseded_wrongly == 0
    assert result.questions_found == result.questions_expected >= 5
    assert result.noise == 0 and result.beliefs_written >= 75
    assert result.small_talk_clean == result.small_talk_expected >= 10
    assert result.chit_chat_beliefs == 0 and result.copied_from_example == 0
    assert result.jobs_failed == 0 and result.jobs == result.turns
    # What it costs, with OpenAI's cache rule played by the stand-in (bench/extract_cost.py):
    # the pre-check lost no gold, and the uncached prompt stays under 700 tokens per turn.
    assert result.turns_skipped >= 8 and result.calls_per_turn < 1
    assert 0 < result.uncached_prompt_tokens_per_turn <= 700 < result.prompt_tokens_per_turn


def test_a_regex_model_without_understanding_scores_at_most_a_quarter_on_every_row() -> None:
    result = score(SHIPPED, regex_gamer)
    rows = {
        "facts": (result.facts_found, result.facts_expected),
        "rejected": (result.rejected_captured, result.rejected_expected),
        "superseded": (result.supersessions_detected, result.supersessions_expected),
        "open questions": (result.questions_found, result.questions_expected),
        "beliefs in the gold": (result.beliefs_written - result.noise, result.beliefs_written),
        "small talk left alone": (result.small_talk_clean, result.small_talk_expected),
    }
    over = {row: got for row, got in rows.items() if got[0] * 4 > got[1]}
    assert over == {}, rows
    assert result.chosen_rejected > 0 and result.superseded_wrongly > 0 and result.noise > 0


def test_a_worse_model_is_scored_exactly_as_scripted() -> None:
    chosen = {
        "dev-mongo-driver",  # answers nothing: 2 probes and 1 rejection missed
        "dev-redis-to-valkey",  # misses the correction: a probe, a supersession, a rejection
        "dev-chit-chat-coffee",  # a belief from small talk
        "research-stats-r",  # chats instead of answering: a failed job
        "writer-no-em-dashes",  # copies the worked example
        "research-citation-style",  # right
    }
    subset = [c for c in SHIPPED if c.id in chosen]

    def spoil(conversation_id: str, answer: dict[str, Any]) -> dict[str, Any] | None:
        if conversation_id == "dev-mongo-driver":
            answer["new_beliefs"] = []
        if conversation_id == "dev-redis-to-valkey":
            answer["belief_updates"] = []
        if conversation_id == "dev-chit-chat-coffee":
            answer["new_beliefs"] = [
                {
                    "type": "preference",
                    "canonical_name": "coffee",
                    "content": "Drinks coffee.",
                    "confidence": 0.9,
                }
            ]
        if conversation_id == "research-stats-r":
            return None
        if conversation_id == "writer-no-em-dashes" and answer["new_beliefs"]:
            # Five words of the worked example, in the model's own sentence.
            copied = " ".join(EXAMPLE_TEXTS[0].split()[:5])
            answer["new_beliefs"][0]["why_it_matters"] = f"Remember: {copied}."
        return answer

    result = score(subset, reference_brain(subset, spoil))
    by_id = {d.id: d for d in result.details}
    mongo = by_id["dev-mongo-driver"]
    assert (mongo.facts_found, mongo.facts_expected) == (0, 2)
    assert by_id["dev-redis-to-valkey"].supersessions_detected == 0
    assert (result.facts_found, result.facts_expected) == (4, 8)
    assert (result.rejected_captured, result.rejected_expected) == (2, 5)
    assert (result.supersessions_detected, result.supersessions_expected) == (0, 1)
    assert result.chit_chat_beliefs == 1 and result.copied_from_example == 1
    assert (result.small_talk_clean, result.small_talk_expected) == (0, 1)
    assert result.noise == 2  # the small-talk belief and the cache belief no probe accepts
    assert result.jobs == result.turns == 11 and result.jobs_failed == 1
    assert result.failures == {"ExtractionOutputInvalid": 1}


def test_cost_per_turn_counts_the_providers_cached_tokens_and_skipped_turns() -> None:
    subset = [c for c in SHIPPED if c.id in {"dev-mongo-driver", "dev-redis-to-valkey"}]
    result = score(subset, reference_brain(subset), Behaviour(prompt_cache=True))
    assert result.turns == 5 and result.turns_skipped == 1  # "perfect, thanks"
    # Per job: the jobs asked (a second look at a belief it was not shown is a call more).
    assert result.calls_per_job >= 1 and result.calls_per_turn < result.calls_per_job
    # The first call fills the cache; the other three reuse its rules, schema and examples.
    assert result.uncached_prompt_tokens_per_turn * 3 < result.prompt_tokens_per_turn
    assert result.prompt_tokens_per_turn > 1024 * 0.8


def test_a_bad_conversation_file_is_refused_by_name(tmp_path: Any) -> None:
    bad = tmp_path / "set.json"
    bad.write_text('{"conversations": [{"id": "x", "persona": "dev", "turns": []}]}')
    with pytest.raises(BeliefError, match=r"conversations\.0\.turns"):
        load_conversations(bad)
    with pytest.raises(BeliefError, match="does not exist"):
        load_conversations(tmp_path / "missing.json")
