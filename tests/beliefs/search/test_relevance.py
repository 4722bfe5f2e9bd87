"""The relevance model: code and mixed-script turns reach names, everyday senses need evidence,
and each hit carries its features and score against the threshold."""

from __future__ import annotations

from beliefs.index.belief_index import BeliefIndex
from beliefs.model.models import Belief
from beliefs.search.matcher import MIN_SCORE, model_candidates, search
from beliefs.search.relevance import MODEL, Model, kept
from beliefs.text.identifiers import identifier_words, split_scripts
from beliefs.text.query import parse_query
from tests.beliefs.factory import belief, index_of


def _index(*beliefs: Belief) -> BeliefIndex:
    """`beliefs` among ten unrelated ones, kept and ranked by the relevance model."""
    index = index_of(*beliefs, filler=10)
    index.relevance_model = True
    return index


def _found(index: BeliefIndex, text: str) -> set[str]:
    return {h.belief.id for h in search(index, "u1", parse_query(text), lambda b: True)}


def test_identifiers_and_paths_are_read_into_their_words() -> None:
    assert identifier_words("src/app/helm_release.py")[:1] == ("src/app/helm_release.py",)
    assert {"helm", "release", "app"} <= set(identifier_words("src/app/helm_release.py"))
    assert "bigquery" in identifier_words("BigQueryClient")
    terms = parse_query("bump `helm/values.yaml` before the deploy")
    assert {"helm", "values", "helm/values.yaml"} <= terms.coded


def test_a_path_gives_each_segment_and_file_name_whole() -> None:
    words = parse_query("put it in platform-charts/merchant-webhooks/values-prod.yaml?").words
    assert {"platform-charts", "values-prod.yaml", "values-prod", "webhooks", "prod"} <= set(words)
    assert "indexer.proto" in identifier_words("proto/lynx/indexer/v1/indexer.proto")
    assert "well-known" not in parse_query("a well-known trick").coded  # prose, not a path


def test_a_host_whose_first_label_is_a_number_gives_its_words() -> None:
    image = '"482193067715.dkr.ecr.ap-southeast-1.amazonaws.com/payment-gw:1.14.2": 401'
    words = parse_query(f"Failed to pull image {image}").words
    assert {"ecr", "amazonaws", "payment-gw"} <= set(words)


def test_a_file_s_path_names_the_folders_it_is_in() -> None:
    vpc = belief("vpc", "vpc_cidr_allocation", ["infra/modules/vpc"], content="Prod VPC ranges.")
    index = _index(vpc)
    assert _found(index, "add two subnets in infra/modules/vpc/main.tf please") == {"vpc"}
    assert _found(index, "add two subnets in infra/modules/eks/main.tf please") == set()
    # one folder is no path of folders: "src/app.py" gives no "src/" word
    assert [w for w in identifier_words("src/app.py") if "/" in w] == ["src/app.py"]


def test_latin_and_other_scripts_inside_a_word_are_split() -> None:
    assert split_scripts("BigQueryのスロット") == "BigQuery のスロット"
    assert "bigquery" in parse_query("BigQueryのスロット使用量").words
    assert parse_query("helm 차트 버전 올리는 법").other_script


def test_a_name_inside_a_path_finds_its_belief() -> None:
    tf = belief("tf", "infra_terraform", ["Terraform"], content="Infra is in Terraform.")
    index = _index(tf)
    assert "tf" in _found(index, "why does infra/terraform_plan.py pin the provider version?")
    assert _found(index, "why does src/plan.py pin the provider version?") == set()


def test_each_hit_carries_its_features_and_score_against_the_threshold() -> None:
    helm = belief("helm", "deploy_helm", ["Helm"], content="Deploys with Helm charts.")
    index = _index(helm)
    hits = search(index, "u1", parse_query("upgrade the Helm chart"), lambda b: True)
    assert [h.belief.id for h in hits] == ["helm"]
    verdict = hits[0].relevance
    assert verdict is not None and verdict.threshold == MODEL.threshold
    assert verdict.logit >= verdict.threshold and hits[0].score >= MIN_SCORE
    assert abs(MODEL.logit([v for _, v in verdict.features]) - verdict.logit) < 1e-9
    assert verdict.as_dict()["kept"] is True


def test_an_everyday_word_alone_does_not_bring_a_name_in() -> None:
    go = belief("go", "backend_language_go", ["Go"], content="Services are written in Go 1.22.")
    index = _index(go)
    assert _found(index, "let's go with the second approach") == set()
    assert _found(index, "rewrite it in Go") == {"go"}


def _verdict(
    index: BeliefIndex, text: str, *, sense: bool = True, bid: str = "go"
) -> dict[str, float]:
    """A candidate's features for `text` (the model here keeps whatever it weighs)."""
    with index.lock:
        scores, m = model_candidates(index.user("u1"), parse_query(text), sense)
    everything = Model(tuple(0.0 for _ in MODEL.weights), float("-inf"))
    verdicts = dict(kept(m, scores, lambda bid: True, None, model=everything))
    return dict(verdicts[bid].features)


def test_the_sense_check_s_verdict_is_a_feature() -> None:
    go = belief("go", "backend_language_go", ["Go"], content="Services are written in Go 1.22.")
    index = _index(go)
    # an everyday word with nothing of the belief's world: the sense check finds nothing
    idle = _verdict(index, "let's go with the second approach")
    assert (idle["sense_failed"], idle["sense_passed"]) == (1.0, 0.0)
    # the belief's own words near it: corroborated
    served = _verdict(index, "port the services in go to 1.23")
    assert (served["sense_failed"], served["sense_passed"]) == (0.0, 1.0)
    # a deliberate search reads no sense: neither feature is set
    asked = _verdict(index, "let's go with the second approach", sense=False)
    assert (asked["sense_failed"], asked["sense_passed"]) == (0.0, 0.0)
    assert idle["sense_contrary"] == asked["sense_contrary"] == 0.0


def test_a_name_after_a_word_of_kinship_is_evidence_against() -> None:
    tomas = belief("tomas", "second_shooter", ["Tomás"], content="Tomás is her second shooter.")
    index = _index(tomas)
    nephew = _verdict(index, "my nephew Tomás turns 10 next week", bid="tomas")
    assert (nephew["sense_failed"], nephew["sense_contrary"]) == (1.0, 1.0)
    shoot = _verdict(index, "can Tomás cover the wedding as second shooter", bid="tomas")
    assert (shoot["sense_passed"], shoot["sense_contrary"]) == (1.0, 0.0)


def test_the_kind_word_s_verdict_is_a_feature() -> None:
    db = belief("db", "database_postgres", ["Postgres"], content="The app's database is Postgres.")
    index = _index(db)
    # asked for ("which database"): the sense check lets the kind word count, and so does the model
    asked = _verdict(index, "which database do we use?", bid="db")
    assert (asked["name_word_only"], asked["kind_passed"]) == (1.0, 1.0)
    assert _found(index, "which database do we use?") == {"db"}
    # someone else's database, with nothing of the belief's world: the check finds nothing
    turn = "my sister keeps her recipes in the database her school set up for parents"
    other = _verdict(index, turn, bid="db")
    assert (other["name_word_only"], other["kind_passed"]) == (1.0, 0.0)
    assert _found(index, turn) == set()


def test_a_model_hit_s_clauses_say_what_corroborated_them() -> None:
    go = belief("go", "backend_language_go", ["Go"], content="Services are written in Go 1.22.")
    index = _index(go)
    hits = search(index, "u1", parse_query("rewrite the billing services in Go"), lambda b: True)
    assert [(c.term, c.corroborated) for c in hits[0].clauses] == [("go", "written as a name")]
