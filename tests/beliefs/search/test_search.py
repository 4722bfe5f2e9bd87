"""Alias-weighted BM25: matching rules, scoring and explanations, on a real index."""

from __future__ import annotations

from beliefs.index.belief_index import BeliefIndex
from beliefs.model.models import Belief
from beliefs.model.record import AnyBelief
from beliefs.search.deadline import Deadline
from beliefs.search.matcher import MIN_SCORE, Hit, search, within_one_edit
from beliefs.text.query import parse_query
from tests.beliefs.factory import belief, index_of


def hits(index: BeliefIndex, query: str) -> list[Hit]:
    return search(index, "u1", parse_query(query), lambda b: True)


def ids(index: BeliefIndex, query: str) -> list[str]:
    return [h.belief.id for h in hits(index, query)]


def corpus() -> BeliefIndex:
    return index_of(
        belief("k8s", "kubernetes", ["k8s", "kube"]),
        belief("ts", "language_typescript", ["TypeScript", "TS"]),
        belief(
            "mongo",
            "mongodb_raw_driver",
            ["MongoDB", "Mongo"],
            rejected_alternatives=["Mongoose", "Prisma"],
        ),
        belief("dlq", "dead_letter_queue", ["dead letter", "DLQ"]),
        belief("gha", "github_actions", ["GHA", "CI pipeline"]),
        belief("err", "error_handling", ["error handling", "exceptions", "error"]),
        belief("other", "other_thing", ["kube"], user_id="u2"),
    )


def test_exact_alias_word_and_phrase_and_canonical_words() -> None:
    index = corpus()
    assert ids(index, "what's my k8s deploy story?") == ["k8s"]
    assert ids(index, "the dead letter backlog") == ["dlq"]
    assert ids(index, "Kubernetes upgrade") == ["k8s"]


def test_canonical_phrase_matches_through_stop_words() -> None:
    # "github actions" is a canonical bigram and an alias; "the" between words is not
    assert ids(index := corpus(), "our GitHub Actions runners") == ["gha"]
    assert ids(index, "the dead letter of the queue") == ["dlq"]


def test_rejected_alternatives_retrieve_the_decision_and_say_so() -> None:
    [hit] = hits(corpus(), "suggest a good Mongoose schema for my user model")
    assert hit.belief.id == "mongo"
    assert [(c.field, c.term) for c in hit.clauses] == [("rejected_alternative", "mongoose")]
    assert hit.score >= MIN_SCORE


def test_fuzzy_allows_one_edit_after_a_two_character_prefix() -> None:
    index = corpus()
    assert ids(index, "typscript generics") == ["ts"]  # deletion
    assert ids(index, "typsecript generics") == ["ts"]  # transposition
    assert ids(index, "mongod") == ["mongo"]  # insertion against "mongo"
    assert ids(index, "k9s pods") == []  # edit inside the guarded prefix
    assert ids(index, "mango pooling") == []  # "ma" != "mo"
    [hit] = hits(index, "typscript")
    assert hit.clauses[0].term == "typscript~typescript"


def test_short_terms_never_fuzzy_match() -> None:
    # "tx" is one edit from "ts" but two-character terms match exactly or not at all
    assert ids(corpus(), "tx") == []


def test_fuzzy_phrase_matches_one_edit_away() -> None:
    assert ids(corpus(), "the CI pipelines are slow") == ["gha"]


def test_users_are_separate_corpora() -> None:
    assert ids(corpus(), "kube") == ["k8s"]
    assert [h.belief.id for h in search(corpus(), "u2", parse_query("kube"), lambda b: True)] == [
        "other"
    ]


def test_rarer_alias_and_shorter_alias_list_rank_higher() -> None:
    index = index_of(
        # everyday words: each belief's text holds a word of the turn, so each counts
        belief("pipe", "functional_pipeline", ["pipe", "compose"], content="pipe transforms"),
        belief(
            "err",
            "error_handling",
            ["error handling", "exceptions", "try-catch", "error", "Result type"],
            content="explicit returns",
        ),
        belief("e2", "error_budget", ["error"], content="explicit budget"),
        belief("e3", "error_pages", ["error"], content="explicit pages"),
    )
    ranked = ids(index, "explicit error returns in pipe transforms")
    assert ranked[0] == "pipe"
    assert ranked.index("e2") < ranked.index("err")  # same alias, shorter alias list


def test_common_alias_with_low_idf_falls_below_the_minimum_score() -> None:
    names = [f"{a}{b}" for a in ("alpha", "bravo", "delta", "kilo") for b in ("ix", "on", "ar")]
    shared = [belief(f"b{i}", f"service_{i}", ["platform", name]) for i, name in enumerate(names)]
    index = index_of(*shared, *(belief(f"x{i}", f"thing_{i}", [f"thing{i}"]) for i in range(30)))
    assert ids(index, "platform question") == []
    assert ids(index, "deltaon question") == ["b7"]


def test_every_hit_explains_its_score() -> None:
    [hit] = hits(corpus(), "GHA and the CI pipeline")
    fields = {(c.field, c.term) for c in hit.clauses}
    assert fields == {("alias", "gha"), ("alias", "ci pipeline")}
    assert abs(sum(c.score for c in hit.clauses) - hit.score) < 1e-9


def test_accept_filters_and_weight_scales_before_the_cut() -> None:
    index = corpus()
    terms = parse_query("kube and typescript")
    kept = search(index, "u1", terms, lambda b: b.id != "k8s")
    assert [h.belief.id for h in kept] == ["ts"]
    weighted = search(
        index, "u1", terms, lambda b: True, weight=lambda b: 2.0 if b.id == "ts" else 1.0
    )
    assert weighted[0].belief.id == "ts"
    dropped = search(index, "u1", terms, lambda b: True, weight=lambda b: 0.01)
    assert dropped == []


def test_a_belief_is_weighed_once_per_weight_and_again_when_it_changes() -> None:
    index = corpus()
    terms = parse_query("kube and typescript")
    weighed: list[str] = []

    def weight(b: AnyBelief) -> float:
        weighed.append(b.id)
        return 2.0 if b.id == "ts" else 1.0

    first = search(index, "u1", terms, lambda b: True, weight=weight)
    assert sorted(weighed) == ["k8s", "ts"]
    again = search(index, "u1", terms, lambda b: True, weight=weight)
    assert [(h.belief.id, h.score) for h in again] == [(h.belief.id, h.score) for h in first]
    assert sorted(weighed) == ["k8s", "ts"]  # kept with each belief, not looked up again
    index.upsert(belief("ts", "language_typescript", ["TypeScript", "TS"]))
    search(index, "u1", terms, lambda b: True, weight=weight)
    assert sorted(weighed) == ["k8s", "ts", "ts"]  # a new version of a belief is weighed anew
    other = search(index, "u1", terms, lambda b: True, weight=lambda b: 0.01)
    assert other == []  # other rules, other weights


def test_a_passed_deadline_ranks_what_the_clauses_read_by_then_found() -> None:
    index = corpus()
    terms = parse_query("kubernetes, typescript and mongodb")
    whole = search(index, "u1", terms, lambda b: True, deadline=(far := Deadline(60.0)))
    assert {h.belief.id for h in whole} == {"k8s", "ts", "mongo"} and not far.reached
    assert [h.belief.id for h in whole] == ids(index, "kubernetes, typescript and mongodb")
    late = Deadline(-1.0)
    cut = search(index, "u1", terms, lambda b: True, deadline=late)
    # the first clause (the canonical name) is read; no later one is
    assert [h.belief.id for h in cut] == ["k8s"] and late.reached
    assert cut[0].score == next(h.score for h in whole if h.belief.id == "k8s")


def test_an_alias_shared_by_more_beliefs_then_fewer_scores_as_a_fresh_index() -> None:
    # Postings change form as an alias gains beliefs (one, a few, grouped by alias count)
    # and back as it loses them: the scores are those of an index built from scratch.
    shared = [
        belief(f"k{i}", f"kafka_topic_{i}", ["kafka", *[f"extra{i}x{j}" for j in range(i % 3)]])
        for i in range(30)  # groups of ten by alias count: past a tuple's size
    ]
    index = index_of(filler=20)
    terms = parse_query("the kafka consumer")

    def scored(ix: BeliefIndex) -> list[tuple[str, float]]:
        return [(h.belief.id, round(h.score, 9)) for h in search(ix, "u1", terms, lambda b: True)]

    for count, added in enumerate(shared, 1):
        index.upsert(added)
        assert scored(index) == scored(index_of(*shared[:count], filler=20))
    posting = index.user("u1").aliases["kafka"]
    assert isinstance(posting, dict) and all(isinstance(g, list) for g in posting.values())
    for count in range(len(shared) - 1, 0, -1):
        index.remove(shared[count].id)
        assert scored(index) == scored(index_of(*shared[:count], filler=20))
    assert index.user("u1").aliases["kafka"] == "k0"


def test_index_follows_upserts_and_removals_without_rebuild() -> None:
    index = corpus()
    renamed: Belief = belief("k8s", "kubernetes", ["cluster thing"])
    index.upsert(renamed)
    assert ids(index, "kube") == []
    assert ids(index, "the cluster thing again") == ["k8s"]
    index.remove("k8s")
    assert ids(index, "kubernetes cluster thing") == []
    assert index.get("k8s") is None


def test_within_one_edit() -> None:
    assert within_one_edit("redis", "redis") == 0
    assert within_one_edit("reedis", "redis") == 1
    assert within_one_edit("typsecript", "typescript") == 1
    assert within_one_edit("axbc", "abcx") is None
    assert within_one_edit("abc", "abcde") is None
