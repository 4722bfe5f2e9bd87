"""Whether a turn's words agree with a belief's own text (the check weak neighbours need)."""

from __future__ import annotations

from beliefs.index.agreement import document_frequency, shared_word, text_stems, turn_stems
from beliefs.text.query import parse_query
from tests.beliefs.factory import belief

DEPLOY = belief(
    "d",
    "deploy_argocd",
    ["Argo CD"],
    content="Deploys go through Argo CD; production syncs need approval. Rollback is a git revert.",
    why_it_matters="Nobody runs kubectl by hand.",
)


def test_two_words_of_the_turn_meet_one_word_of_the_belief() -> None:
    turn = turn_stems(parse_query("how do we roll back a bad release?"))
    assert turn["rollback"] == "roll back"
    assert shared_word(turn, DEPLOY) == "roll back"


def test_the_belief_s_names_and_general_words_agree_on_nothing() -> None:
    own = text_stems(DEPLOY)
    assert {"argo", "deploy", "cd"}.isdisjoint(own)  # name matching already weighs those
    assert "kubectl" in own and "revert" in own  # why_it_matters counts as its own text
    assert shared_word(turn_stems(parse_query("is Argo down? we need to deploy")), DEPLOY) is None


def test_a_name_the_belief_only_mentions_is_not_what_it_is_about() -> None:
    pianist = belief(
        "r", "redis_character", ["Redis"], content="Redis is a jazz pianist Mara meets in Lisbon."
    )
    assert "mara" not in text_stems(pianist)
    assert "pianist" in text_stems(pianist)
    assert shared_word(turn_stems(parse_query("tell me about Mara's father")), pianist) is None


def test_hyphenated_words_match_closed_up_and_by_their_parts() -> None:
    oncall = belief("o", "pager_rotation", content="The on-call engineer gets paged.")
    assert shared_word(turn_stems(parse_query("who is oncall tonight?")), oncall) == "oncall"


def test_a_word_many_beliefs_hold_is_not_telling() -> None:
    beliefs = [
        belief("a", "answers_short", content="Prefers short answers."),
        belief("b", "options_one", content="Prefers one recommendation."),
    ]
    frequency = document_frequency(beliefs)
    turn = turn_stems(parse_query("what are my preferences?"))
    assert frequency["prefer"] == 2
    assert shared_word(turn, beliefs[0]) == "preferences"
    assert shared_word(turn, beliefs[0], frequency, most=1) is None
