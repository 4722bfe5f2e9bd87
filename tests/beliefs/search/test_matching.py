"""How each clause matched: exact, stemmed, kind word, corroborated everyday word."""

from __future__ import annotations

import pytest

from beliefs.index.belief_index import BeliefIndex
from beliefs.search.matcher import Hit, search
from beliefs.text.query import parse_query
from tests.beliefs.factory import belief, index_of


def hits(index: BeliefIndex, query: str) -> list[Hit]:
    return search(index, "u1", parse_query(query), lambda b: True)


def matches(index: BeliefIndex, query: str) -> dict[str, list[tuple[str, str, str | None]]]:
    return {
        h.belief.id: [(c.term, c.match, c.corroborated) for c in h.clauses]
        for h in hits(index, query)
    }


def test_inflections_match_by_stem_below_the_exact_form() -> None:
    index = index_of(belief("t", "tracing_otel", ["Tracing"]), filler=10)
    assert matches(index, "the Traces are missing") == {
        "t": [("traces~tracing", "stemmed", "written as a name")]
    }
    exact, stemmed = hits(index, "the Tracing")[0].score, hits(index, "the Traces")[0].score
    assert 0 < stemmed < exact


@pytest.mark.parametrize("turn", ["notarising the Mac build fails", "the Notarisation step"])
def test_a_british_spelling_matches_the_american_one_by_stem(turn: str) -> None:
    index = index_of(belief("n", "macos_signing", ["notarize"]), filler=10)
    assert [how for _, how, _ in matches(index, turn)["n"]] == ["stemmed"]


def test_an_everyday_name_needs_corroboration() -> None:
    go = belief("go", "backend_language_go", ["Go"], content="Services are written in Go 1.22.")
    index = index_of(go, filler=10)
    assert matches(index, "let's go with the second approach") == {}
    assert matches(index, "rewrite it in Go") == {"go": [("go", "exact", "written as a name")]}
    assert matches(index, "is the `go` binary there") == {
        "go": [("go", "exact", "written as a name")]
    }
    # A host's own name is a written form too: "sentry.io", a pasted link.
    sentry = belief("s", "error_tracking", ["Sentry"], content="Errors go to Sentry.")
    index = index_of(sentry, filler=10)
    assert matches(index, "the sentry at the gate waved us in") == {}
    assert matches(index, "sentry.io quota exceeded again") == {
        "s": [("sentry", "exact", "written as a name")]
    }
    go_version = belief("g2", "go_toolchain", ["Go"], content="The Go version is pinned.")
    index = index_of(go_version, filler=10)
    assert matches(index, "which go version") == {"g2": [("go", "exact", "domain word 'version'")]}


def test_a_rare_word_of_the_belief_corroborates_from_anywhere_in_the_turn() -> None:
    ruby = belief(
        "r", "legacy_ruby_monolith", ["Ruby"], content="The onboarding monolith runs Ruby 3.1."
    )
    index = index_of(ruby, filler=10)
    assert matches(index, "which ruby version is the onboarding app on?") == {
        "r": [("ruby", "exact", "domain word 'onboarding'")]
    }
    assert matches(index, "ruby earrings for my mom, she has a shop") == {}
    # an everyday word of the belief corroborates from anywhere too, one of the commonest
    # ("the", "make") only within two words
    assert matches(index, "ruby earrings for a customer, she runs a shop") == {
        "r": [("ruby", "exact", "domain word 'runs'")]
    }


def test_an_acronym_that_spells_an_everyday_word_needs_corroboration() -> None:
    gut = belief("g", "testing_gut", ["GUT"], content="Unit-tests GDScript with the GUT addon.")
    index = index_of(gut, filler=10)
    assert matches(index, "my gut says it is the collision layer") == {}
    assert matches(index, "my GUT test fails") == {"g": [("gut", "exact", "written as a name")]}


def test_a_newer_dictionary_word_is_an_everyday_word() -> None:
    airflow = belief("a", "batch_jobs_airflow", ["Airflow"], content="Nightly jobs are DAGs.")
    index = index_of(airflow, filler=10)
    assert matches(index, "could it be an airflow thing with the laptop vents?") == {}
    assert matches(index, "the Airflow scheduler is stuck") == {
        "a": [("airflow", "exact", "written as a name")]
    }


def test_an_everyday_word_an_edit_from_an_alias_is_no_typo() -> None:
    index = index_of(
        belief("c", "hobby_cello", ["cello"]),
        belief("f", "runtime_security_falco", ["Falco"], content="Falco watches syscalls."),
        filler=10,
    )
    assert matches(index, "the notebook has 80 cells") == {}
    assert matches(index, "my celo lesson") == {"c": [("celo~cello", "fuzzy", None)]}
    assert matches(index, "IT pushed CrowdStrike Falcon onto our laptops") == {}
    assert matches(index, "Falko alerts on exec") == {"f": [("falko~falco", "fuzzy", None)]}


def test_an_everyday_word_reaching_an_alias_by_its_stem_needs_the_belief_s_world() -> None:
    ui = belief("c", "ui_toolkit_compose", ["Composables"], content="Screens are Jetpack Compose.")
    index = index_of(ui, filler=10)
    assert matches(index, "compose a polite message to my landlord") == {}
    assert matches(index, "docker compose up fails on the port") == {}
    assert matches(index, "compose the login screen from two screens") == {
        "c": [("compose~composables", "stemmed", "domain word 'screens'")]
    }


def test_a_short_word_an_edit_from_an_alias_is_another_word_save_a_plural() -> None:
    index = index_of(
        belief("s", "slo_playback", ["SLO"], content="Playback start SLO is 99.5%."),
        belief("o", "quarterly_okrs", ["okr"], content="Team OKRs are set each quarter."),
        filler=10,
    )
    assert matches(index, "target only the edge boxes with a grain in top.sls") == {}
    assert "o" in matches(index, "draft the team okrs for Q3")


def test_a_lowercase_everyday_alias_needs_the_belief_s_world_unless_inflected() -> None:
    errors = belief(
        "e",
        "error_handling",
        ["exceptions"],
        content="Explicit error returns, not thrown exceptions.",
        scope=["domain:code"],
    )
    train = belief("t", "commute_train", ["train"], scope=["domain:personal"])
    index = index_of(errors, train, filler=10)
    # alone, an everyday word is no name: "train and test error", "the train's late again"
    assert (
        matches(index, "train vs test error again? a master's student asked me and I blanked") == {}
    )
    # a word of the belief's own text beside it, or a topic of another belief of its scope
    assert matches(index, "should I throw exceptions or return them?") == {
        "e": [("exceptions", "exact", "domain word 'return'")]
    }
    pipeline = belief("p", "ci_pipeline", ["pipeline"], scope=["domain:code"])
    home = [belief(f"h{i}", f"home_{i}", [f"home{i}"], scope=["domain:personal"]) for i in range(4)]
    index = index_of(errors, pipeline, *home, filler=2)
    turn = "is it normal a pipeline swallows exceptions when jobs retry overnight"
    assert matches(index, turn) == {
        "e": [("exceptions", "exact", "a belief of its scope named too")],
        "p": [("pipeline", "exact", "a belief of its scope named too")],
    }
    # ... a scope that holds most of the user's beliefs says nothing of the turn
    index = index_of(errors, pipeline, filler=10)
    assert matches(index, turn) == {}
    # a word pointing at the user's own one, or a turn too short for another sense
    assert matches(index, "write a bio for the pipeline") == {
        "p": [("pipeline", "exact", "the user's own")]
    }
    assert matches(index, "a starter pipeline template for a chrome extension with vite") == {}
    assert matches(index, "pipeline broken") == {"p": [("pipeline", "exact", "the user's own")]}
    # an inflected form is the user asking about the thing: "where do we keep secrets?"
    secret = belief("s", "secrets_vault", ["Vault", "secret"], content="Kept in Vault.")
    index = index_of(secret, filler=10)
    assert matches(index, "where do we keep secrets for payments?") == {
        "s": [("secrets~secret", "fuzzy", None)]
    }


def test_a_lowercase_alias_counts_with_the_belief_s_words() -> None:
    oncall = belief(
        "o",
        "oncall_rotation",
        ["on-call rotation", "rotation"],
        content="The SRE on-call rotation is weekly; handoff is on Monday.",
    )
    freeze = belief(
        "f",
        "release_freeze",
        ["release", "code freeze"],
        content="No deploys from Thursday noon until the weekly cut on Monday.",
    )
    index = index_of(oncall, freeze, filler=10)
    assert (
        matches(index, "when should I do the tire rotation on my car, dealer says every 10k km")
        == {}
    )
    assert matches(index, "how does the weekly rotation work") == {
        "o": [("rotation", "exact", "domain word 'weekly'")]
    }
    # one of the commonest words has too many senses: it needs the belief's own words
    assert matches(index, "write the release notes for the iOS app") == {}
    assert matches(index, "can we still release on thursday?") == {
        "f": [("release", "exact", "domain word 'thursday'")]
    }


def test_a_first_name_needs_the_belief_s_sense_and_its_capital_tells_nothing() -> None:
    shooter = belief(
        "s",
        "second_shooter_tomas",
        ["second shooter", "Tomás"],
        content="Her regular second shooter is Tomás, paid per hour for weddings.",
    )
    index = index_of(shooter, filler=10)
    assert matches(index, "my nephew Tomás turns 10 next week, gift ideas?") == {}
    assert matches(index, "can Tomás cover the wedding on Saturday?") == {
        "s": [("tomás", "exact", "domain word 'wedding'")]
    }


def test_a_number_with_its_unit_is_a_word_of_the_belief() -> None:
    lucas = belief(
        "l", "apprentice_lucas", ["Lucas"], content="Lucas may start at 4h at the earliest."
    )
    index = index_of(lucas, filler=10)
    assert matches(index, "est-ce que Lucas peut venir à 4h samedi ?") == {
        "l": [("lucas", "exact", "domain word '4h'")]
    }
    assert matches(index, "est-ce que Lucas peut venir samedi ?") == {}


def test_an_alias_written_with_a_full_stop_is_found_as_typed() -> None:
    plane = belief("p", "bench_planes", ["No. 4", "Lie-Nielsen"], content="The No. 4 smooths.")
    index = index_of(plane, filler=10)
    assert matches(index, "tearout on curly maple with the No. 4, even with a tight mouth") == {
        "p": [("no 4", "exact", None)]
    }


def test_an_alias_joined_by_an_ampersand_is_found_as_typed() -> None:
    client = belief(
        "r", "client_rowan_pike", ["Rowan & Pike"], content="Rowan & Pike is an S corp."
    )
    index = index_of(client, filler=10)
    assert matches(index, "Rowan & Pike's owner wants a lower salary") == {
        "r": [("rowan pike", "exact", None)]
    }


# Word lists drop a name's symbols ("c++" is not "c", nor "w&b" the letters w and b), and
# people type names without their accents or apostrophes, or a dotted name with a space
# (matched as if one edit away).
TYPED_NAMES = {
    "rewrite the parser in c++": ("C++", "exact"),
    "port the tool to c#": ("C#", "exact"),
    "upgrade to .net 9": (".NET", "exact"),
    "our ci/cd keeps timing out": ("CI/CD", "exact"),
    "log the metrics to w&b": ("W&B", "exact"),
    "notepad++ keeps freezing": ("Notepad++", "exact"),
    "meet at cafe nero at 3": ("Café Nero", "fuzzy"),
    "the parcel for hauptstrasse 12 arrived": ("Hauptstraße 12", "fuzzy"),
    "o’reilly book on kafka": ("O'Reilly", "fuzzy"),
    "my oreilly safari account on kafka": ("O'Reilly", "fuzzy"),
    "flights to the zürich office": ("Zurich office", "fuzzy"),
    "java17 records vs lombok": ("Java", "exact"),  # a version typed against the name
    "next js app router question": ("Next.js", "fuzzy"),  # a dotted name spaced out
    "@priya can you review this": ("Priya", "fuzzy"),  # a handle, a channel
    "mute eng-alerts channel for the weekend": ("#eng-alerts", "fuzzy"),
}


@pytest.mark.parametrize("turn", TYPED_NAMES)
def test_a_name_written_as_people_type_it_is_found(turn: str) -> None:
    alias, how = TYPED_NAMES[turn]
    thing = belief("t", "user_thing", [alias], content=f"{alias} is the user's, on kafka.")
    index = index_of(thing, filler=10)
    [(_, matched, _)] = matches(index, turn)["t"]
    assert matched == how


def test_a_word_typed_with_other_accents_is_another_word() -> None:
    cat = belief("c", "cat_mo", ["Mỡ", "bé Mỡ"], content="Mỡ is the user's cat.")
    postings = index_of(cat, filler=10).user("u1")
    assert postings.folded_like("mở") == ()  # "mở", to open, typed with its tone: not "mỡ"
    assert postings.folded_like("mo") == ("mỡ",)  # typed without tones: the cat's name
    assert postings.folded_like("bé mở") == ()
    assert postings.folded_like("be mo") == ("bé mỡ",)


def test_a_name_typed_without_its_accents_has_its_sense_checked_as_a_typo_does() -> None:
    language = belief("v", "work_language", ["valencià"], content="Sworn work into valencià.")
    drink = belief("r", "house_drink", ["rakı", "raki"], content="The house pours rakı.")
    index = index_of(language, drink, filler=10)
    assert matches(index, "my sister is moving to valencia in june") == {}
    assert matches(index, "a sworn translation into valencia") == {
        "v": [("valencia~valencià", "fuzzy", "domain word 'sworn'")]
    }
    # A word that is itself an alias is that alias, not also its twin without the dot.
    assert [term for term, _, _ in matches(index, "The rakı we pour")["r"]] == ["rakı"]


@pytest.mark.parametrize("title", ["Dr Frost", "Dr. Frost"])
def test_a_surname_after_a_title_names_the_person_alone(title: str) -> None:
    frost = belief(
        "f", "dr_alun_frost", [title], content="Dr Frost approves linezolid and meropenem."
    )
    index = index_of(frost, filler=10)
    assert matches(index, "need to ring Frost about a VRE bacteraemia on A4") == {
        "f": [("frost~dr frost", "part", "written as a name")]
    }
    assert matches(index, "will the frost kill my dahlias tonight?") == {}
    assert matches(index, "a VRE bacteraemia needs linezolid, is frost on call") == {
        "f": [("frost~dr frost", "part", "domain word 'linezolid'")]
    }
    assert matches(index, "shall I ask frost about the VRE bacteraemia") == {
        "f": [("frost~dr frost", "part", "someone speaking or spoken to")]
    }


def test_a_turn_that_opens_with_a_name_is_about_the_user_s_own() -> None:
    finn = belief("f", "son_finn", ["Finn"], content="Finn is 7 and allergic to sesame.")
    jonah = belief("j", "designer_jonah", ["Jonah"], content="Jonah designs the website.")
    index = index_of(finn, jonah, filler=10)
    assert matches(index, "Finn's class is doing a bake sale, which buns are safe?") == {
        "f": [("finn", "exact", "the turn opens with it")]
    }
    assert set(matches(index, "Jonah just sent the new homepage comps")) == {"j"}
    # elsewhere in the turn the capital says nothing of a name no dictionary lists
    assert matches(index, "met a Finn at a conference who raved about free school meals") == {}
    assert matches(index, "the story of Jonah and the whale for a school assembly?") == {}
    # a part of a longer name does not open a turn: "Argo Workflows" is no Argo CD
    argo = belief("a", "deploys_argo_cd", ["Argo CD"], content="Deploys go through Argo CD.")
    index = index_of(argo, filler=10)
    assert matches(index, "Argo Workflows or Airflow for orchestration?") == {}


def test_a_rare_word_of_one_belief_s_longer_name_names_it_alone() -> None:
    cat = belief(
        "m", "cat_tool_memoq", ["memoQ"], rejected_alternatives=["Trados Studio"],
        content="Translates in memoQ; Trados Studio was too dear for the few agency jobs.",
    )  # fmt: skip
    cache = belief("c", "cache_redis", ["redis"], content="The cache is Redis 7.")
    broker = belief("b", "celery_broker", ["redis broker"], content="Celery connections use Redis.")
    runs = belief("r", "dbt_runs", ["dbt runs"], content="dbt runs nightly.")
    tests = belief("t", "dbt_tests", ["dbt tests"], content="dbt tests gate merges.")
    index = index_of(cat, cache, broker, runs, tests, filler=10)
    # "Trados" alone is the rejected Trados Studio: it needs the belief's world, as a part does
    assert matches(index, "new client insists on Trados packages, time to buy it for the agency?")[
        "m"
    ] == [("trados~trados studio", "part", "domain word 'agency'")]
    # a word that is an alias by itself, or a part of several beliefs' names, is no part
    assert set(matches(index, "redis connection refused from the cache")) == {"c"}
    assert matches(index, "dbt is slow on the laptop") == {}
    # a function word joining a name's words is no part of it; one opening a name may be
    board = belief(
        "w", "welstand", ["commissie voor welstand"], content="The facade plans need approval."
    )
    dags = belief("d", "dag_naming", ["dag naming"], content="DAG ids are snake_case.")
    index = index_of(board, dags, filler=10)
    assert matches(index, "schrijf de update voor Ellen: de planning loopt nog") == {}
    assert set(matches(index, "new DAG for the hubspot sync, which naming?")) == {"d"}
    # ... unless it is a word of any sentence in the turn's own language
    duo = belief("m", "backup_duo", ["mijn duo"], content="Femke covers my caseload.")
    index = index_of(duo, filler=10)
    assert matches(index, "een collega zegt dat mijn caseload te groot is, klopt dat?") == {}
    # ... nor one common in the language of its script ("για", "for", of a rejected plan)
    licence = belief(
        "t", "taxi_licence", ["άδεια ταξί"],
        rejected_alternatives=["διαμέρισμα για airbnb"], content="Πούλησε την άδεια της.",
    )  # fmt: skip
    index = index_of(licence, filler=10)
    assert (
        matches(index, "πινω ενεργειακα για να βγαλω τη νυχτα, πειραζει με το χαπι της πιεσης")
        == {}
    )


def test_a_name_written_inside_a_longer_name_is_another_thing_s() -> None:
    gary = belief("g", "lab_technician_gary", ["Gary"], content="Gary preps the science labs.")
    sentry = belief("s", "errors_sentry", ["Sentry"], content="Errors go to Sentry.")
    zephyr = belief("z", "rtos_zephyr", ["Zephyr"], content="The firmware runs Zephyr RTOS.")
    index = index_of(gary, sentry, zephyr, filler=10)
    assert matches(index, "what's Gary Lineker's podcast? the science staff love it") == {}
    assert matches(index, "does Tesla's Sentry Mode drain the battery?") == {}
    assert matches(index, "is the California Zephyr worth two days?") == {}
    # the belief's own words in the name, or the name alone, still count
    assert matches(index, "which board does Zephyr RTOS support?") == {
        "z": [("zephyr", "exact", "its own name's words")]
    }
    assert "g" in matches(index, "can Gary prep the labs on Monday?")
    assert "s" in matches(index, "errors are not reaching Sentry since the deploy")


def test_a_rarer_name_in_a_turn_of_a_few_words_is_the_user_s() -> None:
    jest = belief("j", "unit_tests_jest", ["Jest"], content="JavaScript unit tests run with Jest.")
    django = belief("d", "backend_django", ["Django"], content="The main backend is Django.")
    flask = belief("f", "api_flask", ["Flask"], content="The API is a Flask app.")
    spring = belief("s", "backend_spring", ["Spring"], content="Services are Spring Boot.")
    rust = belief("r", "cli_rust", ["Rust"], content="The CLI is written in Rust.")
    zustand = belief("z", "state_zustand", ["Zustand"], content="Client state lives in Zustand.")
    index = index_of(jest, django, flask, spring, rust, zustand, filler=10)
    assert matches(index, "jest config") == {"j": [("jest", "exact", "the user's own")]}
    assert matches(index, "bump django to 5.1") == {"d": [("django", "exact", "the user's own")]}
    assert matches(index, "zustand devtools?") == {"z": [("zustand", "exact", "the user's own")]}
    # a longer turn has room for another sense; an everyday word, in English or in the
    # turn's language, needs its world
    assert matches(index, "fill the flask with cold water before the hike") == {}
    assert matches(index, "spring break plans?") == {}
    assert matches(index, "rust on my bike") == {}
    assert matches(index, "der Zustand ist schlecht") == {}
    # beside everyday words only, a rare name may be another's: a god, a series
    loki = belief("l", "logs_loki", ["Loki"], content="Logs are shipped to Grafana Loki.")
    index = index_of(loki, filler=10)
    assert matches(index, "watching loki tonight") == {}
    assert matches(index, "loki retention config") == {"l": [("loki", "exact", "the user's own")]}


def test_a_topic_counts_by_a_short_turn_only_in_a_few_words() -> None:
    cluster = belief("b", "cluster_badger", ["badger"], content="Jobs run on the badger cluster.")
    index = index_of(cluster, filler=10)
    assert matches(index, "badger is down again") == {"b": [("badger", "exact", "the user's own")]}
    # few telling words, but room to say another sense
    assert matches(index, "how to keep a badger out of the vegetable garden") == {}


def test_a_model_or_version_written_after_a_name_keeps_it_the_user_s() -> None:
    schuco = belief(
        "w", "windows_schuco", ["Schüco"], rejected_alternatives=["Reynaers"],
        content="Aluminium frames are Schüco AWS 75; Reynaers was dropped for its lead times.",
    )  # fmt: skip
    gary = belief("g", "lab_technician_gary", ["Gary"], content="Gary preps the science labs.")
    index = index_of(schuco, gary, filler=10)
    # "CS 77" and "Jr" name a line of the thing, not another thing of its name
    assert matches(index, "the builder is pushing Reynaers CS 77 for the frames, push back?") == {
        "w": [("reynaers", "exact", None)]
    }
    # a title before a name is no model: "Dr Gary" is still someone else
    assert matches(index, "is Dr Gary Lineker's podcast any good?") == {}


def test_a_code_of_two_or_three_letters_in_capitals_needs_the_belief_s_world() -> None:
    uv = belief("u", "python_packaging_uv", ["uv"], content="Python projects are managed with uv.")
    dbt = belief("d", "transforms_dbt", ["dbt"], content="Warehouse models are built with dbt.")
    dagster = belief("g", "orchestrator_dagster", ["Dagster"], content="Dagster runs the jobs.")
    index = index_of(uv, dbt, dagster, filler=10)
    # "UV" is many things: a sunburn index is no package manager
    assert matches(index, "the UV index is 9 tomorrow, which sunscreen for a toddler?") == {}
    assert ("uv", "exact", "domain word 'projects'") in matches(
        index, "UV keeps resolving an old version for our projects"
    )["u"]
    assert matches(index, "UV lock fails") == {"u": [("uv", "exact", "the user's own")]}
    # a belief of its scope named too says which world the turn is in
    assert ("dbt", "exact", "a belief of its scope named too") in matches(
        index, "Dagster marks every DBT test as failed after the upgrade, no idea why yet"
    )["d"]
    # typed in lower case, it is the user's own tool's short name
    assert matches(index, "uv keeps resolving an old version, no idea why yet") == {
        "u": [("uv", "exact", None)]
    }
    assert matches(index, "run `uv sync` again") == {"u": [("uv", "exact", None)]}


def test_a_turn_in_kana_or_han_is_long_for_as_many_words_as_it_holds() -> None:
    ci = belief("c", "ci_codemagic", ["CI"], content="Builds run on Codemagic CI.")
    index = index_of(ci, filler=10)
    # Chinese writes no space between words: this is no three-word turn about the user's CI
    assert matches(index, "公司要做 CI 视觉识别手册, 一般包括哪些内容?") == {}
    assert matches(index, "CI 壊れた") == {"c": [("ci", "exact", "the user's own")]}


def test_a_name_said_to_be_kin_or_from_somewhere_is_the_belief_s_only_when_it_says_so() -> None:
    reviewer = belief("p", "priya_gateway_owner", ["Priya"], content="Priya reviews the gateway.")
    partner = belief("s", "partner_sanna", ["Sanna"], content="Sanna is his partner.")
    index = index_of(reviewer, partner, filler=10)
    assert matches(index, "my sister Priya turns 30, draft a toast") == {}
    # ... and so is a name said to be from somewhere
    assert matches(index, "Priya from accounts is leaving, draft two lines for her card") == {}
    assert matches(index, "Priya from the gateway team wants the PR split") == {
        "p": [("priya", "exact", "what it is from")]
    }
    assert set(matches(index, "Priya wants the PR split in two")) == {"p"}
    # ... typed in lower case too, for a name no dictionary lists; "from" alone says where
    assert matches(index, "priya from data eng says redshift has no MERGE") == {}
    assert set(matches(index, "priya from the gateway team wants the PR split")) == {"p"}
    assert ("sanna", "exact", "its kinship word") in matches(index, "my partner Sanna is ill")["s"]


def test_someone_speaking_spoken_to_or_opening_the_turn_is_the_belief_s_person() -> None:
    rose = belief(
        "r", "agency_bridgewater", ["Bridgewater", "Rose"], content="Agency for legal work."
    )
    rory = belief("a", "apprentice_rory", ["Rory"], content="Second-year apprentice electrician.")
    index = index_of(rose, rory, filler=10)
    said = "someone speaking or spoken to"
    assert matches(index, "Rose says they're moving everyone to memoQ") == {
        "r": [("rose", "exact", said)]
    }
    assert set(matches(index, "rory wants to do the trip times on his own tomorrow")) == {"a"}
    assert set(matches(index, "ask rose if the deadline can move")) == {"r"}
    assert set(matches(index, "draft an email to rose, the contract is late")) == {"r"}
    assert set(matches(index, "how do I bring up with rose that the rates went up")) == {"r"}
    assert set(matches(index, "need to tell Rory I'm away on the 14th")) == {"a"}
    assert set(matches(index, "Rose pyta, czy termin można przesunąć")) == {"r"}  # Polish
    assert set(matches(index, "Rose m'dit que le délai peut bouger")) == {"r"}  # "to me"
    assert set(matches(index, "A Rose disse que o prazo pode mudar")) == {"r"}  # an article
    assert set(matches(index, "Rose me ha dicho que el plazo se mueve")) == {"r"}  # "has said"
    assert set(matches(index, "rose falou que o prazo pode mudar")) == {"r"}  # Portuguese
    assert set(matches(index, "rory mejlade, vill ha tiderna i morgon")) == {"a"}  # Swedish
    # ... and so is the turn's subject written with its 's
    assert matches(index, "Rory's off sick tomorrow, who covers the trip times?") == {
        "a": [("rory", "exact", "the turn opens with its 's")]
    }
    assert matches(index, "a rose's thorns: are they poisonous to dogs?") == {}
    # ... and a name written as one that just did something
    dog = belief("d", "dog_biscuit", ["Biscuit"], content="Biscuit is a spaniel.")
    pets = index_of(dog, filler=10)
    assert matches(pets, "Biscuit just nicked half a prawn off my plate") == {
        "d": [("biscuit", "exact", said)]
    }
    assert matches(pets, "my biscuit just crumbled into the tea") == {}
    # a flower, a possession or a word of kinship say otherwise
    assert matches(index, "my rose needs pruning before winter") == {}
    assert matches(index, "the rose says nothing about the soil, does it?") == {}
    assert matches(index, "my brother-in-law Rory wants a bike for his birthday") == {}


def test_a_turn_about_the_user_s_family_reaches_only_beliefs_that_say_so() -> None:
    hour = belief("g", "golden_hour_sessions", ["golden hour"], content="Portraits at dusk.")
    wedding = belief(
        "w", "sister_wedding_shoot", ["the wedding"], content="Shooting my sister's wedding."
    )
    index = index_of(hour, wedding, filler=10)
    assert matches(index, "my brother is an EMT and keeps on about the golden hour") == {}
    assert matches(index, "my kid needs a golden hour photo for a school project") == {}
    assert set(matches(index, "move the golden hour session to Saturday")) == {"g"}
    assert set(matches(index, "my sister's wedding: which lens for the wedding?")) == {"w"}
    # ... unless the relation is a source, or the turn speaks for a household
    assert set(matches(index, "my neighbour says golden hour shoots are overrated")) == {"g"}
    assert set(matches(index, "my wife and I want our golden hour session earlier")) == {"g"}
    # ... or names the belief's thing as the user's own
    assert set(matches(index, "can my son join my golden hour session?")) == {"g"}
    assert set(matches(index, "can my son use my 2 golden hour slots?")) == {"g"}


def test_the_user_s_family_is_read_in_the_languages_users_write() -> None:
    hour = belief("g", "golden_hour_sessions", ["golden hour"], content="Portraits at dusk.")
    visit = belief("v", "mum_visit_golden_hour", ["the visit"], content="Her mother visits in May.")
    index = index_of(hour, visit, filler=10)
    assert matches(index, "ma fille veut une photo golden hour pour l'école") == {}
    assert matches(index, "mi hijo quiere fotos en golden hour") == {}
    assert matches(index, "meine Tochter fragt nach golden hour Fotos") == {}
    assert matches(index, "η ανιψιά μου θέλει φωτογραφίες golden hour") == {}  # "my" after
    assert matches(index, "tita ko wants golden hour photos for her birthday") == {}
    assert set(matches(index, "Farhan bhai ko golden hour ka plan bhejna hai")) == {"g"}
    # ... and "my kids" is what a teacher or a coach calls the class
    assert set(matches(index, "my kids want a golden hour session for the yearbook")) == {"g"}
    # ... a belief that names the relation, in either language, still answers
    assert set(matches(index, "minha mãe chega em maio, the visit plan?")) == {"v"}
    # ... and a relation cited as a source, or a household, does not narrow the turn
    assert set(matches(index, "mi hermana dice que golden hour es mejor")) == {"g"}
    assert set(matches(index, "notre fils veut une séance golden hour")) == {"g"}


def test_a_name_commoner_in_another_language_needs_corroboration() -> None:
    dog = belief("d", "dog_estrella", ["Estrella"], content="Has a rescue dog named Estrella.")
    zustand = belief("z", "state_zustand", ["Zustand"], content="Client state lives in Zustand.")
    index = index_of(dog, zustand, filler=10)
    assert matches(index, "quiero ver la estrella fugaz esta noche") == {}
    assert matches(index, "der Zustand der Straße ist schlecht") == {}
    assert matches(index, "should Estrella the dog eat before a walk?") == {
        "d": [("estrella", "exact", "domain word 'dog'")]
    }


def test_an_everyday_word_of_the_turn_s_language_needs_corroboration() -> None:
    # "merel" (a blackbird) and "verger" (an orchard) are everyday Dutch and French words, too
    # rare elsewhere to have another sense in an English turn; both are rare English words too,
    # so a name the belief writes so still needs the turn to say it is one
    dog = belief(
        "d",
        "dog_merel",
        ["Merel"],
        content="Has a beagle named Merel who hates rain.",
        scope=["domain:personal"],
    )
    orchard = belief(
        "v",
        "client_verger",
        ["Verger"],
        content="Verger is the cider client; invoices net 30.",
        scope=["domain:work"],
    )
    index = index_of(dog, orchard, filler=10)
    assert matches(index, "er zit elke ochtend een merel tegen mijn raam te tikken") == {}
    assert matches(index, "on va au verger cueillir des pommes avec les enfants") == {}
    assert matches(index, "is it too wet to walk merel today?") == {}
    assert matches(index, "merel ate a whole sock, should I worry?") == {
        "d": [("merel", "exact", "someone speaking or spoken to")]
    }
    assert matches(index, "Verger still hasn't paid, can you draft a reminder?") == {
        "v": [("verger", "exact", "the turn opens with it")]
    }
    # in the turn's language it counts where the belief's world corroborates it
    assert matches(index, "ze is bang voor de rain, moet merel toch naar buiten?") == {
        "d": [("merel", "exact", "domain word 'rain'")]
    }
    # ... and so does opening the turn as a verb's subject
    assert matches(index, "merel is bang voor de regen, moet ze toch naar buiten?") == {
        "d": [("merel", "exact", "the turn opens with it")]
    }


def test_a_capital_tells_nothing_of_a_name_capitalised_in_every_sense() -> None:
    # "Chicago" and "Dave" are everyday by frequency alone: no lower-case sense for the capital
    # to tell apart from, so they need the belief's world as an unwritten word does
    office = belief(
        "c", "office_chicago", ["Chicago"], content="The Chicago office runs payroll on ADP."
    )
    lead = belief("d", "tech_lead_dave", ["Dave"], content="Dave leads the billing squad.")
    index = index_of(office, lead, filler=10)
    assert matches(index, "Going to Chicago in May for a wedding, where should we stay?") == {}
    assert matches(index, "My brother-in-law Dave is turning 70, card ideas?") == {}
    assert matches(index, "does the Chicago payroll close early this month?") == {
        "c": [("chicago", "exact", "domain word 'payroll'")]
    }
    # a code in capitals is still read as written
    ts = belief("t", "language_typescript", ["TS"], content="The web app is TypeScript 5.")
    assert matches(index_of(ts, filler=10), "TS me marca un error en items[0]") == {
        "t": [("ts", "exact", "written as a name")]
    }


def test_an_edit_from_an_everyday_word_needs_corroboration() -> None:
    primers = belief(
        "p", "primers_storage", ["primers"], content="qPCR primers are stored at -20 in box B3."
    )
    index = index_of(primers, filler=10)
    assert matches(index, "do I need a primer before acrylic paint?") == {}
    assert matches(index, "which box is the qPCR primer in?") == {
        "p": [("primer~primers", "fuzzy", "domain word 'qpcr'")]
    }


def test_a_kind_word_of_a_canonical_name_matches_alone() -> None:
    index = index_of(
        belief("db", "database_postgres", ["Postgres"]),
        belief("m", "authorship_mode", []),
        filler=10,
    )
    assert matches(index, "which database do we use?") == {
        "db": [("database", "name_word", "asked which one")]
    }
    assert matches(index, "strict mode") == {}  # no rare word names the thing in authorship_mode


def test_a_kind_word_matches_beside_an_everyday_word_the_belief_writes_as_a_name() -> None:
    crash = belief("c", "crash_reporting_sentry", ["Sentry"], content="App crashes go to Sentry.")
    guard = belief("g", "crash_barrier_sentry", ["sentry"], content="A sentry stands guard.")
    index = index_of(crash, guard, filler=10)
    assert matches(index, "the app keeps crashing on launch") == {
        "c": [("crashing~crash", "name_word", "domain word 'app'")]
    }  # "sentry" is an everyday word: only the belief writing it as a name makes it one
    assert matches(index, "stop `crash` from paging") == {}  # in code, no kind of thing


def test_a_kind_word_speaks_of_the_user_s_one_thing_not_of_any_such_thing() -> None:
    content = "Galleries go out on Pixieset, watermarked."
    gallery = belief("g", "client_gallery_pixieset", ["Pixieset"], content=content)
    index = index_of(gallery, filler=10)
    assert matches(index, "such a full day, two client calls and a shoot") == {}
    assert matches(index, "how do I send the client proofs?") == {
        "g": [("client", "name_word", "the user's own")]
    }
    assert matches(index, "client wants the raw files") == {
        "g": [("client", "name_word", "the user's own")]
    }  # the turn opens with it, and is too short to say another sense
    # one word of the name in a longer turn needs the belief's world there too
    turn = "one of my clients left shortbread biscuits for the photographers after the reception"
    assert matches(index, turn) == {}
    assert matches(index, "one of my clients hates the watermark on her photos, can I drop it") == {
        "g": [("clients~client", "name_word", "domain word 'watermark'")]
    }


def test_a_kind_word_may_be_a_dictionary_word_or_a_form_of_a_plural_one() -> None:
    index = index_of(
        belief("p", "orchestrator_prefect", ["Prefect"]),
        belief("c", "charts_recharts", ["Recharts"]),
        belief("a", "api_style_rest", ["REST"]),
        filler=10,
    )
    assert matches(index, "which orchestrator are we on?") == {
        "p": [("orchestrator", "name_word", "asked which one")]
    }
    assert matches(index, "which charting library?") == {
        "c": [("charting~charts", "name_word", "asked which one")]
    }
    assert matches(index, "where do we keep API keys?") == {}  # "api": no dictionary word


def test_a_number_in_a_canonical_name_does_not_match_alone() -> None:
    index = index_of(belief("pg", "database_postgres_2024", ["pg", "postgres"]), filler=10)
    assert "2024" not in index.user("u1").name_words  # never looked up: not held
    assert matches(index, "the 2024 roadmap is done") == {}
    assert matches(index, "which database?") == {
        "pg": [("database", "name_word", "asked which one")]
    }


def test_a_kind_word_needs_a_name_after_it() -> None:
    """Only a "<kind words> <name>" canonical name has kind words: a descriptive name (no one
    name at its end) is reached through its aliases, never through one everyday word of it."""
    pool = belief("pool", "db_pool_max_conns", ["DB_POOL_MAX_CONNS", "connection pool"])
    pricing = belief("price", "wedding_packages_pricing", ["price list"])
    queue = belief("mq", "message_queue_kafka", ["Kafka"])
    index = index_of(pool, pricing, queue, filler=10)
    assert matches(index, "the hotel has a rooftop pool and a sauna") == {}
    assert matches(index, "she wants a winter wedding this year") == {}
    assert set(matches(index, "our queues are backing up again")) == {"mq"}
    assert set(matches(index, "raise DB_POOL_MAX_CONNS to 20?")) == {"pool"}
    assert set(matches(index, "is the max pool size per pod too low?")) == {"pool"}  # two words


def test_two_words_of_a_descriptive_name_stand_side_by_side_or_are_asked_for() -> None:
    merge = belief("m", "dbt_incremental_merge_strategy", ["incremental strategy"])
    key = belief("k", "payment_idempotency_key", ["idempotency key", "idempotency"])
    index = index_of(merge, key, filler=10)
    assert matches(index, "there's a merge conflict in dbt_project.yml after the rebase") == {}
    assert set(matches(index, "should the incremental merge dedupe first?")) == {"m"}
    assert set(matches(index, "which key does a payment call need?")) == {"k"}
    assert matches(index, "the key to the payment office is lost") == {}


def test_the_kind_word_ending_a_modified_name_counts_when_asked_for() -> None:
    content = "The team's primary database is PostgreSQL 16."
    index = index_of(
        belief("db", "primary_database", ["postgres", "pg"], content=content), filler=10
    )
    assert matches(index, "which database should the new ledger service use?") == {
        "db": [("database", "name_word", "asked which one")]
    }
    assert matches(index, "the database is slow today") == {}  # not asked which one


def test_a_name_too_frequent_to_name_anything_makes_no_kind_word() -> None:
    content = "The NWMLS Form 17 seller disclosure is collected at listing signing."
    form = belief("f", "seller_disclosure_form_17", ["Form 17"], content=content)
    index = index_of(form, filler=10)
    assert matches(index, "sellers of the rambler want to rent furniture for staging") == {}
    assert set(matches(index, "did the buyer's agent get form 17?")) == {"f"}


def test_an_everyday_word_hundreds_of_beliefs_hold_is_checked_only_where_named_otherwise() -> None:
    content = "A Spark batch job."
    many = [belief(f"b{i}", f"batch_{i}_zq", ["spark"], content=content) for i in range(300)]
    etl = belief("etl", "etl_pipeline", ["spark", "nightly etl"], content=content)
    index = index_of(*many, etl, filler=5000)  # a rare word among them all
    assert set(matches(index, "the nightly etl spark batch failed")) == {"etl"}
    assert len(matches(index, "the nightly run of Spark failed")) == 301  # written as a name


def test_a_word_of_the_canonical_name_anywhere_in_the_turn_corroborates() -> None:
    content = "Environments are handled by uv; avoids Poetry because of its speed."
    tooling = belief("py", "python_tooling", ["uv", "python tooling", "poetry"], content=content)
    index = index_of(tooling, filler=10)
    found = matches(index, "add a dependency to my python project with poetry")
    assert found == {"py": [("poetry", "exact", "domain word 'python'")]}
    assert matches(index, "a poetry reading on friday, any tips?") == {}


def test_a_kind_word_of_many_names_is_counted_and_found_again_when_few() -> None:
    names = [f"database_{a}{b}vex" for a in "bcdfghjk" for b in "lmnpqrstw"][:70]
    dbs = [belief(f"d{i}", name, [name[9:]]) for i, name in enumerate(names)]  # "<kind> <name>"
    index = index_of(*dbs, filler=10)
    assert index.user("u1").name_words["databas"] == 70  # only counted: names none of them
    assert matches(index, "which database?") == {}
    for gone in dbs[8:]:
        index.remove(gone.id)
    assert len(index.user("u1").name_words["databas"]) == 8  # type: ignore[arg-type]
    for gone in dbs[2:8]:
        index.remove(gone.id)
    found = matches(index, "which database?")
    assert found == matches(index_of(*dbs[:2], filler=10), "which database?")
    assert set(found) == {"d0", "d1"}


def test_the_reference_mode_matches_as_the_reference_does() -> None:
    index = index_of(belief("t", "tracing_otel", ["tracing"]), filler=10)
    index.reference_only = True
    assert matches(index, "the traces are missing") == {}


def test_a_frequent_name_that_is_no_dictionary_word_needs_corroboration() -> None:
    # "jenkins" is no everyday word, but as frequent as "rust": a surname, and a name others
    # bear needs the belief's sense in the turn, as an everyday word does
    ci = belief(
        "ci",
        "ci_system",
        ["github actions", "gha"],
        rejected_alternatives=["jenkins", "circleci"],
        content="Builds run in GitHub Actions; Jenkins and CircleCI were ruled out.",
    )
    index = index_of(ci, filler=10)
    assert matches(index, "write a jenkins pipeline for the builds") == {
        "ci": [("jenkins", "exact", "domain word 'builds'")]
    }
    assert matches(index, "my neighbour jenkins borrowed the ladder") == {}
    rust = belief("r", "systems_language_rust", ["Rust"], content="Tools are written in Rust.")
    index = index_of(rust, filler=10)
    assert matches(index, "the rust on the old chain") == {}


def test_everyday_words_are_frequent_dictionary_words_or_their_plurals() -> None:
    from beliefs.text.lexicon import is_common

    assert [w for w in ("rust", "flask", "slack", "go", "flags", "database") if is_common(w)] == [
        "rust",
        "flask",
        "slack",
        "go",
        "flags",
        "database",
    ]
    assert [w for w in ("jenkins", "django", "kafka", "circleci") if is_common(w)] == []


def test_an_alias_in_another_script_is_found_inside_unspaced_words() -> None:
    daycare = belief("d", "daycare_pickup", ["学童保育", "daycare"], content="Pickup is at 18:00.")
    band = belief("b", "city_pop_band", ["ウクレレ", "ukulele"], content="She plays ukulele.")
    futsal = belief("f", "futsal_wednesdays", ["futsal", "풋살"], content="Futsal on Wednesdays.")
    mark = belief("p", "privacy_mark", ["Pマーク"], content="Renewal audit every two years.")
    index = index_of(daycare, band, futsal, mark, filler=10)
    assert matches(index, "学童保育のお迎えが18時なんだけど") == {
        "d": [("学童保育", "exact", None)]
    }
    assert matches(index, "ウクレレの弦っていつ張り替える?") == {"b": [("ウクレレ", "exact", None)]}
    assert matches(index, "수요일 저녁은 풋살이랑 겹치나") == {"f": [("풋살", "exact", None)]}
    assert matches(index, "Pマークの更新審査の準備") == {"p": [("pマーク", "exact", None)]}
    # a katakana word inside a longer one is another word; a Latin letter must start a word
    assert matches(index, "データベースの正規化を説明して") == {}
    assert matches(index, "GDPマークの話") == {}


def test_a_name_is_found_joined_hyphenated_or_spaced() -> None:
    deck = belief("d", "target_steam_deck", ["Steam Deck"], content="The game ships on the Deck.")
    gf = belief("g", "diet_coeliac", ["gluten-free"], content="Cook gluten-free for Sam.")
    wiz = belief("w", "shift_app", ["ShiftWizard"], content="Shifts are traded in ShiftWizard.")
    sheet = belief("s", "discharge_sheet", ["Going Home sheet"], content="Fill it in at discharge.")
    moles = belief(
        "m", "moles_method", rejected_alternatives=["mole hill"], content="Use n = m/Mr."
    )
    index = index_of(deck, gf, wiz, sheet, moles, filler=10)
    assert matches(index, "does the steamdeck support mesh shaders") == {
        "d": [("steamdeck~steam deck", "fuzzy", None)]
    }
    assert set(matches(index, "need gluten free mains for six")) == {"g"}
    assert set(matches(index, "shift wizard won't let me post a trade")) == {"w"}
    assert set(matches(index, "write the going-home sheet for her owner")) == {"s"}
    # a word of its own is no name written as one word: the idiom is no belief's
    assert matches(index, "a mountain out of a molehill") == {}
    # ... and a name of one word is found typed apart, unless as two everyday words
    dac = belief("c", "dac8_reporting", ["DAC8"], content="Exchanges report crypto from 2026.")
    lane = belief("f", "ios_releases_fastlane", ["fastlane"], content="Releases go by fastlane.")
    index = index_of(dac, lane, filler=10)
    assert matches(index, "with dac 8 kicking in, email the clients?") == {
        "c": [("dac 8~dac8", "fuzzy", None)]
    }
    assert matches(index, "life in the fast lane is tiring") == {}


def test_another_version_of_a_versioned_name_changed_is_the_belief() -> None:
    node = belief("n", "node_version_22", ["node 22", ".nvmrc"], content="Runtime is Node 22.")
    go = belief("g", "go_toolchain", ["go 1.22"], content="Services are pinned to Go 1.22.")
    zones = belief("z", "hr_zones", ["zone 2"], content="Easy runs stay in heart-rate zone 2.")
    index = index_of(node, go, zones, filler=10)
    assert matches(index, "bump node to 24?") == {"n": [("node 24~node 22", "fuzzy", None)]}
    assert set(matches(index, "upgrade go from 1.22 to 1.23")) == {"g"}
    # an alias of the name and the word "version" stands for any version
    flutter = belief("f", "flutter_fvm", ["flutter version", "fvm"], content="Pinned by FVM.")
    assert set(matches(index_of(flutter, filler=10), "bump flutter to 3.29")) == {"f"}
    # a version of another form, or no change of one, names another thing
    assert matches(index, "bump node to 3 replicas") == {}
    assert matches(index, "is wimbledon in zone 3 for the oyster cap?") == {}


def test_a_phrase_an_edit_away_in_a_stop_word_is_another_phrase() -> None:
    wh = belief("w", "snowflake_warehouse", ["the warehouse"], content="TRANSFORM_WH runs dbt.")
    index = index_of(wh, filler=10)
    assert set(matches(index, "is the warehouse suspended?")) == {"w"}
    assert matches(index, "keep them warehouse-agnostic, plain SQL") == {}


def test_a_phrase_an_edit_away_in_a_short_code_is_another_code() -> None:
    scn = belief("s", "line_manager", ["the SCN"], content="Grant is the senior charge nurse.")
    index = index_of(scn, filler=10)
    assert set(matches(index, "ask the scn about the rota")) == {"s"}
    assert set(matches(index, "ask the sccn about the rota")) == {"s"}  # a letter added: a typo
    assert matches(index, "the jcn job closes friday") == {}  # a letter changed: another code


def test_codes_in_builds_files_and_classes_are_terms() -> None:
    cuda = belief("c", "cuda_pin", ["CUDA 12.1"], rejected_alternatives=["cu118"], content="x")
    score = belief(
        "m", "notation_musescore", ["MuseScore", ".mscz"], content="Scores in MuseScore."
    )
    group = belief("t", "class_10x3", ["10X3"], content="Year 10 set 3, chemistry.")
    index = index_of(cuda, score, group, filler=10)
    assert set(matches(index, "his env has torch 2.2.0+cu118 and hangs")) == {"c"}
    assert set(matches(index, "opening choir/arrangements/skye_v3.mscz fails")) == {"m"}
    assert set(matches(index, "10X3 struggled with ionic bonding today")) == {"t"}
    assert "c++" in parse_query("rewrite it in c++").words  # no tag: nothing is split off
    assert matches(index, "a 1920x1080 screen") == {}


def test_a_code_of_a_name_of_several_words_counts_alone_with_the_belief_s_world() -> None:
    lease = belief(
        "l",
        "lease_discount_rate",
        ["ASC 842", "Topic 842"],
        content="Leases are discounted at the risk-free rate under ASC 842.",
    )
    fees = belief("f", "fee_rise", ["2026 fee increase"], content="Fees rise 4% in 2026.")
    index = index_of(lease, fees, filler=10)
    assert matches(index, "can they discount the lease at 7% under 842?") == {
        "l": [
            ("842~asc 842", "part", "domain word 'discount'"),
            ("842~topic 842", "part", "domain word 'discount'"),
        ]
    }
    assert matches(index, "I'm on UA 842 out of SFO tomorrow") == {}
    # a year is no code: "2026" alone names nothing
    assert matches(index, "what fees do we charge in 2026?") == {}


def test_urls_identifiers_with_numbers_and_calls_name_their_aliases() -> None:
    landing = belief("l", "landing_bucket", ["tidepool-landing", "Snowpipe"], content="Raw files.")
    fa2 = belief("f", "attention_impl", ["flash_attention_2", "FA2"], content="Use FA2 kernels.")
    inc = belief("i", "dbt_incremental", ["is_incremental()"], content="Merge late events.")
    index = index_of(landing, fa2, inc, filler=10)
    assert set(
        matches(index, "no files from s3://tidepool-landing/events/dt=2026-03-03/ today")
    ) == {"l"}
    assert set(matches(index, 'I pass attn_implementation="flash_attention_2" and it fails')) == {
        "f"
    }
    assert set(matches(index, "I wrapped the where clause in {% if is_incremental() %}")) == {"i"}
    assert matches(index, "the landing gear of the plane") == {}


def test_paths_a_url_s_bucket_and_pinned_names_are_read() -> None:
    ci = belief("c", "ci_actions", ["GitHub Actions", ".github/workflows"], content="CI.")
    tool = belief("t", "post_tool", ["fea-post"], content="Post-processes the exports.")
    raw = belief("r", "raw_pings", ["s3://rtl-raw-telemetry"], content="Pings land as parquet.")
    ruff = belief("f", "lint_ruff", ["ruff"], content="Python lint is ruff.")
    redis = belief("d", "cache_redis", ["redis"], content="The cache is Redis 7.")
    nvim = belief("n", "editor_nvim", ["nvim"], content="Edits in Neovim.")
    index = index_of(ci, tool, raw, ruff, redis, nvim, filler=10)
    for turn, named in [
        # home, relative and hidden paths, and a URL's bucket as an alias writes it
        (".github/workflows/ci.yml should cache the store", "c"),
        ("~/tools/fea-post throws a KeyError on every export", "t"),
        ("./tools/fea-post/run.sh fails", "t"),
        ("s3://rtl-raw-telemetry/pings/dt=2026-01-14/ is empty", "r"),
        # a name pinned or tagged is written as a name, however everyday the word
        ("pip install ruff==0.6.1 fails", "f"),
        ("docker run -it redis:7-alpine exits at once", "d"),
        ("$HOME/.config/nvim/init.lua broke", "n"),
    ]:
        assert set(matches(index, turn)) == {named}, turn


def test_absolute_and_windows_paths_and_a_snake_case_file_in_a_path_are_read() -> None:
    data = belief("k", "morph_dataset", ["kotusmorph"], content="The dataset, as TSV.")
    nas = belief("n", "studio_nas", ["Synology", "Z:\\Progetti"], content="The studio's NAS.")
    share = belief("s", "notary_share", ["\\\\srv-etude\\actes"], content="Deeds are filed here.")
    hook = belief("h", "xcode_cloud", ["ci_post_clone.sh"], content="Builds run on Xcode Cloud.")
    index = index_of(data, nas, share, hook, filler=10)
    for turn, named in [
        ("/proj/hy-morph/data/kotusmorph_v3/train.tsv has empty lemmas", "k"),
        ("Hyper Backup failed on Z:\\Progetti last night", "n"),
        ("the scan should be in \\\\srv-etude\\actes\\2026\\2026-0142\\ but it is empty", "s"),
        ("ci_scripts/ci_post_clone.sh fails after the brew step", "h"),
    ]:
        assert set(matches(index, turn)) == {named}, turn
    assert matches(index, "/compact the chat and check a\\b") == {}  # no path: one segment


def test_a_path_alias_written_from_the_root_or_home_is_read_as_a_turn_reads_it() -> None:
    euler = belief("e", "euler_cluster", ["/cluster/scratch/nb"], content="Runs on Euler.")
    scans = belief("s", "scan_naming", ["~/Genealogy/Scans/"], content="Scans go here.")
    jobs = belief("j", "job_scripts", ["~/jobs/"], content="Job scripts live in one folder.")
    index = index_of(euler, scans, jobs, filler=10)
    assert set(matches(index, "Disk quota exceeded on /cluster/scratch/nb/runs")) == {"e"}
    assert set(matches(index, "should it go in ~/Genealogy/Scans/ too?")) == {"s"}
    # a folder of one segment stays a path: the word "jobs" is not it
    assert matches(index, "how many jobs are still queued?") == {}


def test_codes_in_groups_give_their_coded_parts_and_leading_groups() -> None:
    groupset = belief("g", "shimano_stock", ["R7100", "Shimano"], content="Stocks Shimano 105.")
    invoices = belief("i", "school_invoicing", ["SHF-2026"], content="Invoices go out monthly.")
    vaccine = belief("v", "lepto_vaccine", ["L4"], content="Dogs get the lepto L4 vaccine.")
    index = index_of(groupset, invoices, vaccine, filler=10)
    assert set(matches(index, "RD-R7100 came in with a bent cage")) == {"g"}
    assert set(matches(index, "a polite chaser for SHF-2026-014 please")) == {"i"}
    # a part of two characters is no code of its own ("L4-L5" is a place on a spine)
    assert matches(index, "the X-ray says spondylosis at L4-L5") == {}


def test_an_abbreviation_with_a_case_ending_after_a_colon_is_the_abbreviation() -> None:
    terms = parse_query("miten saan W&B:hen EM:n samaan paneeliin, och SVT:s nyheter")
    assert {"w&b", "em", "svt"} <= set(terms.words) & terms.marked
    assert {"note:this", "error:invalid"} <= set(parse_query("Note:this Error:invalid").words)


def test_a_rejected_option_counts_when_the_turn_asks_about_changing_to_it() -> None:
    graph = belief(
        "g", "replication_graph", ["RepGraph"], rejected_alternatives=["Iris"], content="Net."
    )
    cat = belief("c", "cat_tool_memoq", ["memoQ"], rejected_alternatives=["Trados Studio"])
    gitops = belief("a", "gitops_argocd", ["Argo CD"], rejected_alternatives=["Flux"])
    index = index_of(graph, cat, gitops, filler=10)
    assert matches(index, "iris worth switching to yet?") == {
        "g": [("iris", "exact", "asked to change to it")]
    }
    assert set(matches(index, "Trados に乗り換えた方がいいんかな？")) == {"c"}
    assert set(matches(index, "why don't we just use flux like everyone else")) == {"a"}
    assert set(matches(index, "should we go with flux after all?")) == {"a"}
    assert set(matches(index, "et si on prenait Flux finalement ?")) == {"a"}
    # "to" joined to its article, and "instead of", in the languages the turns are written in
    assert set(matches(index, "sto pensando di passare alla flux per il cluster nuovo")) == {"a"}
    assert set(matches(index, "¿y si usamos flux en vez de lo que tenemos?")) == {"a"}
    # the same names with no change asked of them are another thing's
    assert matches(index, "we planted purple iris along the fence and it flowers early") == {}
    assert matches(index, "which flux for soldering smd switches on my keyboard") == {}


def test_a_proposal_counts_for_a_rejected_option_whatever_the_words_around_it() -> None:
    varroa = belief(
        "v", "varroa_oxalic_trickle", ["oxalic"], rejected_alternatives=["Apivar (amitraz) strips"]
    )
    depot = belief(
        "d",
        "selcuk_main_wholesaler",
        ["Selçuk"],
        rejected_alternatives=["Hedef Ecza as main depot"],
    )
    index = index_of(varroa, depot, filler=10)
    assert set(matches(index, "tempted to just bung apivar strips in this autumn")) == {"v"}
    # "seferlik hedef" reads as a name of two words, but the turn asks to change to Hedef
    assert set(matches(index, "bu seferlik hedef'e sipariş geçsek daha mı hızlı gelir")) == {"d"}
    # named with no change proposed, a part of a rejected option is another thing's
    assert matches(index, "my neighbour put apivar strips in all her hives in august") == {}


def test_a_proposal_names_a_rejected_option_by_its_first_word() -> None:
    vcs = belief(
        "v", "git_lfs", ["LFS"], rejected_alternatives=["Plastic SCM / Unity Version Control"]
    )
    orm = belief("o", "kettle_orm", ["SQLAlchemy"], rejected_alternatives=["Tortoise ORM"])
    cloud = belief("c", "gpu_budget", ["Lambda Labs"], rejected_alternatives=["AWS p4d on-demand"])
    lambdas = belief("l", "serverless", ["AWS Lambda"])
    index = index_of(vcs, orm, cloud, lambdas, filler=10)
    assert matches(index, "ska vi flytta över till plastic, github gnäller igen") == {
        "v": [("plastic~plastic scm unity version control", "part", "asked to change to it")]
    }
    assert set(matches(index, "tortoise any good for the new tables?")) == {"o"}
    # proposed nothing: the word is the animal's
    assert matches(index, "our tortoise has stopped eating") == {}
    # a word that names another of the user's things is that thing's
    assert set(matches(index, "can we just run the scraper on AWS Lambda?")) == {"l"}


def test_a_name_inflected_in_a_language_with_cases_is_the_name() -> None:
    client = belief("w", "client_wojcik", ["Wójcik"], content="A B2B client on ryczałt.")
    shop = belief("c", "wholesaler", ["hurtownia"], rejected_alternatives=["Castorama"])
    dessert = belief("k", "dessert_kunefe", ["künefe"], content="Künefe takes 12 minutes.")
    index = index_of(client, shop, dessert, filler=10)
    assert set(matches(index, "Wójcikowi wyszło 41 200 zł przychodu, ile ma zapłacić?")) == {"w"}
    assert set(matches(index, "Klient chce żebym kupił gniazdka w Castoramie, bo taniej")) == {"c"}
    turn = "künefenin hazırlanma süresi kaç dakikaydı? garsona ne zaman söylemesi lazım"
    assert set(matches(index, turn)) == {"k"}
    # an English turn inflects no names: "wójcikowi" is read only as itself there
    assert matches(index, "wójcikowi sent the invoice") == {}


def test_an_ending_may_drop_a_name_s_last_vowel_and_slovene_inflects_too() -> None:
    bakery = belief("p", "bakery_pekarek", ["Pekárek"], content="The bakery they buy from.")
    winery = belief("m", "cellar_maribor", ["Vinag"], content="Wine from the Vinag cellar.")
    index = index_of(bakery, winery, filler=10)
    # Czech and Polish drop the "e" of "-ek", "-el", "-er" before an ending
    assert set(matches(index, "Objednal jsem chleba u Pekárka, přijde to zítra?")) == {"p"}
    # Slovene is a language with cases: in lower case, no capital says the word is a name
    assert set(matches(index, "ali imamo z vinagom še pogodbo za to leto?")) == {"m"}


def test_polish_softens_a_name_s_last_consonant_and_opens_its_o_before_an_ending() -> None:
    cat = belief("s", "cat_sledz", ["Śledź"], content="Śledź, stary kot, je tylko karmę nerkową.")
    service = belief("k", "service_sokol", ["Sokół"], content="Sokół scores fraud for the ledger.")
    index = index_of(cat, service, filler=10)
    # "ź" before a vowel is written "zi", and a closed syllable's "ó" opens to "o"
    turn = "kupiłem Śledziowi nową karmę nerkową, nie chce jej tknąć"
    assert matches(index, turn) == {"s": [("śledziowi~śledź", "stemmed", "domain word 'karmę'")]}
    assert set(matches(index, "jak odpalić Sokoła lokalnie? ledger nie ma fraud score")) == {"k"}


def test_a_relation_said_without_my_is_the_user_s_own_where_the_language_says_it_so() -> None:
    wife = belief("k", "wife_kasia", ["Kasia", "żona"], content="Kasia is the user's wife.")
    index = index_of(wife, filler=10)
    # Polish says "my wife" as "żona"; Spanish says "mi esposa", so "esposa" alone is anyone's
    assert set(matches(index, "żona ma urodziny a ja w trasie, co jej wysłać")) == {"k"}
    lucia = belief("l", "wife_lucia", ["Lucía", "esposa"], content="Lucía is the user's wife.")
    spanish = index_of(lucia, filler=10)
    assert matches(spanish, "la esposa de mi jefe cumple años el viernes, qué le regalo") == {}


def test_an_ending_may_replace_a_name_s_last_i() -> None:
    lake = belief("p", "lake_paajarvi", ["Pääjärvi"], content="The lake of her field season.")
    index = index_of(lake, filler=10)
    turn = "Pääjärveltä jäät lähti vasta eilen, ehditäänkö silti aloittaa näytteenotto?"
    assert set(matches(index, turn)) == {"p"}


def test_cyrillic_and_georgian_names_take_their_own_vowels_before_an_ending() -> None:
    cat = belief("p", "cat_pyrizhok", ["Пиріжок"], content="Пиріжок is the user's ginger cat.")
    artist = belief("o", "composer_olena", ["Олена"], content="Олена writes the game's music.")
    road = belief("t", "apiary_tusheti", ["ტუშეთი"], content="The summer apiary in Tusheti.")
    index = index_of(cat, artist, road, filler=10)
    # a dropped "о" put back, and the "а" an ending replaced
    assert set(matches(index, "пиріжка нудить другий день після нового корму")) == {"p"}
    assert set(matches(index, "треба написати олені про нові треки")) == {"o"}
    # Georgian writes no capitals and has no word list: its words are read so in any turn
    assert set(matches(index, "ტუშეთში წელს როდის ავიტანო სკები?")) == {"t"}


def test_a_case_ending_on_the_last_word_of_a_two_word_name_is_the_name() -> None:
    chef = belief("g", "chef_gul", ["Gül Usta"], content="Gül Usta is the head pastry chef.")
    index = index_of(chef, filler=10)
    assert set(matches(index, "gül ustaya bu sene ne kadar zam yapsam, enflasyon %30")) == {"g"}


def test_a_turkish_case_ending_after_an_apostrophe_writes_a_name() -> None:
    shop = belief("b", "pastry_shop_badem", ["Badem"], content="Badem is the user's patisserie.")
    cat = belief("p", "cat_pamuk", ["Pamuk"], content="Pamuk is the shop's white cat.")
    index = index_of(shop, cat, filler=10)
    written = "written as a name"
    turn = "badem'in google yorumlarına cevap yazar mısın, biri 'pasta kuruydu' diye 1 yıldız"
    assert matches(index, turn) == {"b": [("badem", "exact", written)]}
    assert matches(index, "badem ezmesi için iyi bir tarif var mı, bu akşam yapacağım") == {}
    assert matches(index, "pamuk'un aşıları ne zaman") == {"p": [("pamuk", "exact", written)]}
    # after another name's word it is that name's ("orhan pamuk'un"), unless the belief says so
    assert matches(index, "orhan pamuk'un yeni kitabı çıktı mı") == {}


def test_a_name_in_quotes_or_a_list_and_a_call_in_a_formula_are_read() -> None:
    hymn = belief("h", "vicar_hymns", ["Fr Simon"], rejected_alternatives=["Shine, Jesus, Shine"])
    lookups = belief("x", "excel_xlookup", ["XLOOKUP"], rejected_alternatives=["VLOOKUP"])
    index = index_of(hymn, lookups, filler=10)
    assert set(matches(index, "they want 'Shine, Jesus, Shine' on Sunday")) == {"h"}
    assert set(matches(index, "every rate comes from =VLOOKUP(B2,Tariffs!A:F,5,FALSE)")) == {"x"}
    assert matches(index, "the sun will shine on Sunday (see above)") == {}


def test_a_word_of_the_belief_inside_a_compound_corroborates_a_name() -> None:
    foc = belief(
        "f", "motor_control_foc", ["FOC", "Kommutierung"], content="Motors run field-oriented."
    )
    index = index_of(foc, filler=10)
    assert matches(index, "warum nochmal FOC statt Blockkommutierung?") == {
        "f": [("foc", "exact", "domain word 'blockkommutierung'")]
    }
    assert matches(index, "warum nochmal FOC statt Zahlungsverzug?") == {}


def test_numbers_written_in_groups_are_terms_and_small_ratios_need_corroboration() -> None:
    wago = belief("w", "wago_221", ["Wago", "221-413"], content="Only Wago lever connectors.")
    paper = belief("k", "kcse_history", ["311/2"], content="KCSE History paper 2.")
    split = belief("d", "diesel_split", ["60/40"], content="A 60/40 diesel duty split.")
    index = index_of(wago, paper, split, filler=10)
    assert set(matches(index, "wie viele 221-413 brauche ich?")) == {"w"}
    assert set(matches(index, "drill sheet for 311/2 section C")) == {"k"}
    assert matches(index, "is a 60/40 fund still sensible?") == {}
    assert set(matches(index, "is the 60/40 diesel split still allowed?")) == {"d"}
    slo = belief("s", "api_slo", ["99.9"], content="The API's SLO is 99.9% availability.")
    index = index_of(slo, filler=10)
    assert matches(index, "my ISP claims 99.9 uptime, worth switching?") == {}
    assert set(matches(index, "are we still inside 99.9 availability this month?")) == {"s"}


def test_the_names_an_article_takes_point_at_nothing_of_the_user_s() -> None:
    spot = belief("s", "spot_instances", ["spot"], content="Training runs on spot instances.")
    index = index_of(spot, filler=10)
    assert matches(index, "got put on the spot in standup, how do I push back politely") == {}
    assert set(matches(index, "our spot capacity in eu-west dried up overnight")) == {"s"}
    assert set(matches(index, "is the spot pool drained again?")) == {"s"}  # a short turn


def test_a_belief_s_words_with_accents_are_its_world() -> None:
    bouchon = belief(
        "b", "petit_bouchon", ["bouchon"], content="Le bouchon prend ses réservations en ligne."
    )
    index = index_of(bouchon, filler=10)
    assert matches(index, "les réservations du bouchon sont pleines pour samedi") == {
        "b": [("bouchon", "exact", "domain word 'réservations'")]
    }
    assert matches(index, "le bouchon de la bouteille est cassé, je fais quoi ?") == {}


def test_numbers_no_date_reads_codes_with_a_capital_and_long_ids_are_terms() -> None:
    terms = belief("t", "payment_terms", ["30/40/30"], rejected_alternatives=["50/50"])
    form = belief("f", "form_11k", ["11K"], content="11K is her Year 11 chemistry set.")
    account = belief("a", "aws_prod", ["731902458816"], content="The prod AWS account.")
    index = index_of(terms, form, account, filler=10)
    assert set(matches(index, "30/40/30 o 50/50 para un cliente nuevo?")) == {"t"}
    assert set(matches(index, "a WCF sheet for 11K's electrolysis test")) == {"f"}
    assert set(matches(index, "guardduty spike in 731902458816 since 3am")) == {"a"}
    # a date is no name, an amount in lower case no code, and a hash no account
    assert matches(index, "the invoice of 30/04/2030 for 11k") == {}
    assert matches(index, "commit 73190245881a broke the build") == {}


def test_a_code_with_a_number_has_no_sense_of_its_words() -> None:
    regatta = belief("r", "midsummer_regatta", ["Regatta", "LIVE-2041"], content="The June event.")
    index = index_of(regatta, filler=10)
    assert matches(index, "can you draft the art subtasks under LIVE-2041") == {
        "r": [("live-2041", "exact", None)]
    }


def test_a_name_after_the_letters_hebrew_and_arabic_join_to_it_is_the_name() -> None:
    oncall = belief("o", "oncall_rotation", ["תורנות", "on-call"], content="Weekly rotation.")
    ahmed = belief("a", "night_ahmed", ["أحمد"], content="Ahmed covers the night shift.")
    office = belief("m", "office_cairo", ["مكتب"], content="The office in Cairo.")
    index = index_of(oncall, office, ahmed, filler=10)
    assert set(matches(index, "احمد مش جاي الليلة")) == {"a"}  # typed without its hamza
    assert set(matches(index, "מי בתורנות שבוע הבא? צריכה להחליף")) == {"o"}
    assert set(matches(index, "هل أنت بالمكتب اليوم؟")) == {"m"}
    assert set(matches(index, "هل انت في المكتب؟")) == {"m"}
    assert matches(index, "מי בשבוע הבא?") == {}


def test_a_name_that_did_what_only_a_living_thing_does_is_the_belief_s() -> None:
    dog = belief("d", "dog_puma", ["Puma", "the dog"], content="Puma is the family's elkhound.")
    cat = belief("c", "cat_kafka", ["kafka", "o gato"], content="Kafka is his tabby cat.")
    index = index_of(dog, cat, filler=10)
    assert set(matches(index, "puma ate half a ski glove this morning, should i worry")) == {"d"}
    assert set(matches(index, "o kafka vomitou de novo hj cedo")) == {"c"}
    assert matches(index, "are puma trainers any good for running?") == {}
    assert matches(index, "the puma ate a deer on the nature show") == {}  # not the user's Puma
    # in the languages users write, with Tagalog's "si" before a name, and in English refusing
    assert set(matches(index, "puma a mancat ceva de pe jos, ce ii dau?")) == {"d"}  # Romanian
    assert set(matches(index, "si kafka nagsuka 2x kanina, bigyan ko ba ng lugaw?")) == {"c"}
    assert set(matches(index, "puma hasn't eaten since last night, should i worry?")) == {"d"}
    assert matches(index, "puma is eating into our margins this quarter") == {}
    # a participle last, after its auxiliary and a few words (German, Slovenian)
    assert set(matches(index, "puma hat aufs sofa gekotzt, zweites mal heute")) == {"d"}
    assert set(matches(index, "puma je spet neki pojedel na dvorišču")) == {"d"}


def test_a_living_thing_s_act_anywhere_in_the_turn_names_the_user_s_animal() -> None:
    dog = belief("b", "dog_bran", ["Bran"], content="Bran is their lurcher, allergic to chicken.")
    tool = belief("m", "tool_mole", ["Mole"], content="Mole is the team's load-testing tool.")
    index = index_of(dog, tool, filler=10)
    turn = "is 1mg/kg cerenia ok for bran? hes been throwing up since lunch"
    assert set(matches(index, turn)) == {"b"}
    assert matches(index, "bran flakes or porridge for a quick breakfast") == {}
    # the belief says what it names is an animal: a tool named Mole ate nothing
    assert matches(index, "a mole got into the garden and ate the bulbs") == {}
    # ... in the languages users write: "bran iki gündür mamasını yemiyor"
    assert set(matches(index, "bran iki gündür mamasını yemiyor, ne yapayım")) == {"b"}


def test_a_word_opening_the_turn_as_a_verb_s_subject_is_the_user_s_own() -> None:
    home = ["domain:home"]
    nora = belief("n", "daughter_nora", ["Nora"], content="Nora is her daughter.", scope=home)
    ida = belief("i", "daughter_ida", ["Ida"], content="Ida is their daughter, 4.", scope=home)
    index = index_of(nora, ida, filler=10)
    assert set(matches(index, "nora got a 168 on her practice test, what next")) == {"n"}
    assert set(matches(index, "ida hat 39,4 wie viel ml nurofen saft darf sie")) == {"i"}
    assert set(matches(index, "nora znowu nie odrobiła lekcji, co robić")) == {"n"}
    # a namesake opens a turn with no such verb
    assert matches(index, "nora ephron movies for a rainy sunday") == {}
    # ... and after the article some languages give a name, but French does not
    horse = belief("t", "horse_trovao", ["Trovão"], content="Trovão is his gelding.", scope=home)
    moon = belief("l", "bakery_lune", ["Lune"], content="Lune is the bakery's name.", scope=home)
    named = index_of(horse, moon, filler=10)
    assert set(matches(named, "o trovão tá mancando da mão direita desde ontem")) == {"t"}
    assert matches(named, "la lune est pleine ce soir, ça fait lever la pâte ?") == {}


def test_a_name_of_several_words_that_opens_the_turn_is_read_as_one() -> None:
    kasia = belief("k", "colleague_kasia", ["Kasia"], content="Kasia Nowak reviews the MRs.")
    index = index_of(kasia, filler=10)
    assert matches(index, "Kasia Kowalska gra w Stodole w marcu, warto iść?") == {}
    assert set(matches(index, "Kasia Nowak wants the MR reviewed today")) == {"k"}
    assert set(matches(index, "Tell Kasia the MR is ready")) == {"k"}  # a verb opens no name


def test_a_figure_of_the_belief_s_own_text_corroborates_a_name() -> None:
    kita = belief(
        "k", "daycare_kita", ["Kita"], content="She picks her son up from the Kita at 16:30."
    )  # fmt: skip
    asc = belief("a", "lease_standard_asc_842", ["ASC 842"], content="Leases follow ASC 842.")
    index = index_of(kita, asc, filler=10)
    # "Kita" is a German word and a name; the pick-up's time says which
    assert matches(index, "morgen ist die Kita zu, how do I move the 16:30 call?") == {
        "k": [("kita", "exact", "a figure of its own text")]
    }
    # a time the belief does not write says nothing
    assert matches(index, "morgen ist die Kita zu, how do I move the 11:15 call?") == {}
    # nor does a figure of the matched name itself: a flight's number is no lease standard
    assert matches(index, "I'm on UA 842 out of SFO tomorrow") == {}


def test_what_the_user_s_team_uses_is_its_own() -> None:
    slo = belief("s", "slo_generator", ["sloth"], content="SLO rules are generated from specs.")
    index = index_of(slo, filler=10)
    assert matches(index, "what are we using sloth for again") == {
        "s": [("sloth", "exact", "what the user's team uses")]
    }
    # the animal, with no team using it
    assert matches(index, "how long does a sloth sleep in a day, and what does it eat") == {}


def test_a_word_of_korean_japanese_or_chinese_with_an_everyday_sense_needs_corroboration() -> None:
    # the flatmate's name is also the Korean for "one"; the team's sheet is also a car seat
    hana = belief("h", "flatmate_hana", ["하나"], content="Hana is her flatmate; they split rent.")
    sheets = belief(
        "s", "connected_sheets", ["시트", "Connected Sheets"],
        content="Reports go to BigQuery Connected Sheets.",
    )  # fmt: skip
    studio = belief("w", "studio_busan", ["작업실"], content="Her studio is in Busan.")
    index = index_of(hana, sheets, studio, filler=10)
    assert matches(index, "하나은행 체크카드 해외결제 수수료 얼마야") == {}
    assert matches(index, "자동차 시트 커버 가죽 vs 패브릭 뭐가 나아?") == {}
    assert matches(index, "키위 하나에 비타민 C 얼마나 들어있어?") == {}
    bass = belief("b", "city_pop_band", ["ベース"], content="She plays bass in a city pop band.")
    assert matches(index_of(bass, filler=10), "今の sensor ベースのままでいける?") == {}  # "-based"
    # a word rarer than once per ten thousand names the belief alone, as before
    assert set(matches(index, "작업실 월세 또 올랐어")) == {"w"}


def test_a_method_called_in_prose_is_read_as_its_name() -> None:
    unwrap = belief(
        "u", "no_unwrap_in_firmware", ["unwrap()", "unwrap"], content="No unwrap in firmware."
    )  # fmt: skip
    index = index_of(unwrap, filler=10)
    # the call is written apart from what it is called on, so no dotted name holds it
    assert set(matches(index, "MR hat 14x .unwrap() im can rx handler")) == {"u"}


def test_a_name_with_an_umlaut_is_found_written_out() -> None:
    arla = belief(
        "a", "milk_contract_arla", ["Arla", "milk contract"], rejected_alternatives=["Müller"],
        content="The milk goes to Arla on a two-year contract.",
    )  # fmt: skip
    index = index_of(arla, filler=10)
    assert set(matches(index, "a Mueller rep offered 1.5p a litre more, should I switch?")) == {"a"}
    assert set(matches(index, "a Müller rep offered 1.5p a litre more, should I switch?")) == {"a"}


def test_an_everyday_word_of_tagalog_in_a_tagalog_turn_needs_corroboration() -> None:
    mum = belief("n", "mother_in_cebu", ["nanay", "Mama Luz"], content="Her mother lives in Cebu.")
    index = index_of(mum, filler=10)
    # "nanay" is the Tagalog for "mother": here the boyfriend's
    assert matches(index, "Birthday ng nanay ng bf ko sa Sunday, may alam ka bang cake shop?") == {}


def test_a_word_the_turn_asks_the_meaning_of_is_mentioned_not_meant() -> None:
    note = belief("s", "sectio_notes", ["sectio"], content="Sectio notes follow Robson groups.")
    dog = belief("b", "dog_bremner", ["Bremner"], content="Bremner is the family's terrier.")
    band = belief("l", "band_la_banda", ["la banda"], content="She plays bass in La Banda.")
    index = index_of(note, dog, band, filler=10)
    assert matches(index, "what does 'sectio' literally mean in latin") == {}
    assert matches(index, "como le explico que significa 'la banda' en chilango") == {}
    assert matches(index, "who was billy bremner? our lass has a school project") == {}
    # used, not asked about: the user's own things
    assert set(matches(index, "write up the sectio notes for Tuesday")) == {"s"}
    assert set(matches(index, "bremner ate a sock, vet or wait?")) == {"b"}
    assert set(matches(index, "ensayo de 'la banda' el jueves, qué llevo?")) == {"l"}


def test_a_word_the_turn_asks_what_it_is_is_mentioned_not_meant() -> None:
    tyres = belief("a", "client_anvelope_express", ["AE"], content="AE sells tyres online.")
    crm = belief("c", "crm_hubspot", ["CRM"], content="The CRM is HubSpot; exports cap at 10k.")
    index = index_of(tyres, crm, filler=10)
    assert matches(index, "a client wrote 'our AE will reach out', ce e AE?") == {}
    assert matches(index, "what's an AE exactly?") == {}
    assert matches(index, "c'est quoi un CRM ? ma sœur en parle") == {}
    # the user's own thing asked after, or what it does, is meant
    assert set(matches(index, "what's AE? the tyre client?")) == {"a"}
    assert set(matches(index, "what is AE again? the tyre client?")) == {"a"}
    assert set(matches(index, "what's the CRM export limit?")) == {"c"}


def test_a_word_inside_a_matched_name_names_that_thing_not_another_alias() -> None:
    events = belief(
        "e", "fct_events_incremental", ["fct events"], content="fct_events has a 3-day lookback."
    )
    layers = belief(
        "l", "dbt_layers", ["stg", "fct", "marts"], content="Models go stg, int, fct, marts."
    )
    index = index_of(events, layers, filler=10)
    assert set(matches(index, "fct_events lookback needs raising, late events keep dropping")) == {
        "e"
    }
    assert set(matches(index, "new fct model for refunds, which layer reads it?")) == {"l"}
    # a relation's name joins its participants' names: each is meant
    dagster = belief("d", "orchestrator_dagster", ["Dagster"], content="Pipelines run on Dagster.")
    dbt = belief("t", "transform_dbt", ["dbt"], content="Transforms are dbt models.")
    rel = belief(
        "r", "dagster_runs_dbt", ["dagster-dbt"], type="relation", content="Dagster runs dbt."
    )
    index = index_of(dagster, dbt, rel, filler=10)
    assert set(matches(index, "with dagster-dbt, how do I surface failing dbt tests?")) == {
        "d",
        "t",
        "r",
    }


def test_a_title_before_a_name_says_whom_when_the_belief_addresses_them_so() -> None:
    guest = belief(
        "g", "regular_guest_muller", ["Müller", "pan Müller"],
        content="Pan Müller stays in room 214 every month.",
    )  # fmt: skip
    adviser = belief(
        "a", "tax_adviser_huber", ["Frau Huber"], content="Frau Huber files the returns."
    )  # fmt: skip
    farm = belief("f", "apiary_at_hollins", ["Hollins Farm"], content="Hives at Hollins Farm.")
    index = index_of(guest, adviser, farm, filler=10)
    # "muller" is a surname many bear: "mr" says a man, as "pan" does
    assert matches(index, "mr muller emailed, he comes thursday now") == {
        "g": [("muller~müller", "fuzzy", "a title before it")]
    }
    assert matches(index, "Herr Huber (78) macht super Fortschritte") == {}  # not Frau Huber
    assert matches(index, "Dr Hollins thinks I should carry an EpiPen") == {}  # a farm


def test_a_name_written_with_a_case_ending_is_found_in_a_turn_of_any_language() -> None:
    engine = belief(
        "e", "engine_unity", ["Unity"], rejected_alternatives=["Godot"],
        content="The studio stays on Unity 2022 LTS.",
    )  # fmt: skip
    index = index_of(engine, filler=10)
    # too terse to tell its language by, but "Godotiin" is written as a name
    assert set(matches(index, "pitäiskö sittenkin siirtyä Godotiin?")) == {"e"}
    # a noun of German's, written with its capital, is no name with an ending
    kita = belief("k", "kita_vorschule", ["Vorschule"], content="The Vorschule meets Tuesdays.")
    assert matches(index_of(kita, filler=10), "welcher Schulranzen für ein Vorschulkind?") == {}


def test_a_word_written_in_mixed_case_is_written_as_a_name() -> None:
    regulator = belief("b", "bafin_rules", ["BaFin"], content="Onboarding follows BaFin rules.")
    eid = belief("e", "eid_check", ["eID"], content="The eID online check comes first.")
    index = index_of(regulator, eid, filler=10)
    assert set(matches(index, "BaFin-Anforderungen: reicht eID allein?")) == {"b", "e"}
    # a name everyone uses is everyone's, however it is written
    chat = belief(
        "w", "clinical_messaging", ["WhatsApp"], content="Client details never go on WhatsApp."
    )  # fmt: skip
    assert matches(index_of(chat, filler=10), "my WhatsApp backup is stuck at 47%") == {}
    # nor does it say which of the names holding the word is meant
    sharding = belief(
        "f", "sharding_fsdp", ["FSDP"], rejected_alternatives=["DeepSpeed ZeRO-3"],
        content="Training shards with FSDP.",
    )  # fmt: skip
    index = index_of(sharding, filler=10)
    assert matches(index, "reading the DeepSpeed-Ulysses paper for journal club") == {}


def test_a_name_spelt_the_american_way_is_the_british_name() -> None:
    venue = belief("v", "venue_harbour_point", ["Harbour Point"], content="Load-in at 5pm.")
    index = index_of(venue, filler=10)
    assert set(matches(index, "harbor point gig sat, what time load in again")) == {"v"}


@pytest.mark.parametrize(
    ("name", "turn"),
    [
        ("Lotte", "lotte vroeg of ik haar verloskundige wil zijn"),
        ("Kari", "Kari sendte tilbake utkastet med 40 kommentarer"),
        ("Maria", "Maria vill ha en statusuppdatering före 15"),
        ("Nadia", "nadia nanya kenapa PR nya banyak komen"),
        ("Paloma", "Paloma no puede el 14 de marzo"),
        ("Scala", "scala ne subah se do baar vomit kiya"),
        ("Will", "Will forgot his sticks again"),
        ("Lotte", "when is my usual slot with Lotte?"),
        ("Fiona", "fiona's oot on thursday tae look at the hoggs"),
        ("Beat", "Beat will bis Freitag ein Statusupdate, kannst du was entwerfen?"),
        ("Chloé", "chloé tousse encore la nuit depuis une semaine"),
        ("Kopi", "kopi muntah2 dari pagi"),
        ("Mario", "mario pisze że rozładunek przesunięty na 14:00"),
        ("Jelle", "jelle komt dinsdag, kan hij ook naar de kalveren kijken"),
        ("Julio", "Julio me está pidiendo los comprobantes de febrero"),
        ("Оля", "оля скинула нові треки, як швидко завести в проект"),
        ("Rui", "O Rui já mandou o projeto de estabilidade?"),
        ("Jonas", "Jonas har feber igjen og jeg skal på kveldsvakt"),
        ("Sigrún", "Geturðu skrifað póst til Sigrún um vaktina?"),
        ("Ray", "Ray 話 要加到 80m, 改完 config 之後仲要做咩?"),
        ("Made", "made can't teach tmrw morning, his kid is sick"),
        ("Chispa", "Chispa no quiere comer desde ayer, ¿la llevo al veterinario?"),
        ("Kosova", "Kosova je rekla naj ji pošljem nove vzorce satja"),
        ("Vale", "vale ahora quiere una quinta en santiago en vez del salon"),
        ("Jo", "sabi ni jo mag-grab na lang daw ako pag umuulan"),
        ("Dobre", "scrie-i lui dobre un mesaj ca factura din martie e tot neplatita"),
    ],
)
def test_someone_speaking_or_doing_is_the_belief_s_person(name: str, turn: str) -> None:
    person = belief(
        "p", f"colleague_{name.lower()}", [name], content=f"{name} is her colleague on the ward."
    )  # fmt: skip
    index = index_of(person, filler=10)
    assert set(matches(index, turn)) == {"p"}


def test_two_names_of_a_belief_apart_in_the_turn_corroborate_each_other() -> None:
    lead = belief("t", "lead_tech_thao", ["Thảo", "chị Thảo"], content="Runs the salon floor.")
    index = index_of(lead, filler=10)
    # "Thảo" is a common name and "chị" (older sister, she) a word of any sentence: neither
    # alone says which one, but the turn names her twice, apart
    turn = "có nên để Thảo lo tiệm 3 tuần khi em về VN tháng 6 ko, sợ chị ấy mệt"
    assert set(matches(index, turn)) == {"t"}
    assert matches(index, "tháng 6 em về VN, chị ấy có mệt ko") == {}
    assert matches(index, "có nên để Thảo lo tiệm 3 tuần khi em về VN tháng 6 ko") == {}


def test_another_form_of_one_of_the_commonest_words_is_no_topic_by_itself() -> None:
    rota = belief("n", "night_rota", ["nights"], content="She works three nights on, four off.")
    recipes = belief("r", "home_cooking", ["recipes"], content="She cooks most evenings.")
    index = index_of(rota, recipes, filler=10)
    assert matches(index, "any good night markets in town this weekend?") == {}
    # a rarer word in another form than the belief's is still its topic
    assert set(matches(index, "got a recipe for a quick weeknight dinner?")) == {"r"}


def test_a_word_of_any_sentence_in_the_turn_s_language_ties_it_to_nothing() -> None:
    workshop = belief(
        "w",
        "verksted_ensjo",
        ["verkstedet"],
        content="Verkstedet ligger på Ensjø, 60 kvm, delt med en annen snekker.",
    )
    index = index_of(workshop, filler=10)
    # "på" is in every Norwegian sentence, the belief's as the turn's
    assert matches(index, "kranen på verkstedet drypper, hvordan bytter jeg pakning?") == {}
    assert matches(index, "er verkstedet stort nok? 60 kvm holder vel ikke") == {
        "w": [("verkstedet", "exact", "domain word 'kvm'")]
    }


def test_a_rare_word_a_belief_writes_as_a_name_needs_the_turn_to_say_so() -> None:
    home = ["domain:personal"]
    dog = belief("d", "dog_brisket", ["Brisket"], content="Brisket is their beagle.", scope=home)
    rub = belief("r", "brisket_rub", ["brisket"], content="Their brisket rub is salt and pepper.")
    index = index_of(dog, filler=10)
    # a cut of beef, typed as the word it is
    assert matches(index, "smoking a brisket for the 4th, how long per lb at 225") == {}
    # the turn says it is someone: it ate something, it opens the turn as its subject
    assert set(matches(index, "brisket ate half a sock this morning")) == {"d"}
    assert set(matches(index, "Brisket's limping on his back leg again")) == {"d"}
    # a belief that writes the word in lower case is about the thing itself
    assert set(matches(index_of(rub, filler=10), "smoking a brisket for the 4th")) == {"r"}
    # a rejected alternative is the user's decision, however rare its name
    driver = belief(
        "m",
        "database_driver",
        ["mongo driver"],
        rejected_alternatives=["mongoose"],
        content="Uses the raw MongoDB driver, not Mongoose.",
        scope=["domain:work"],
    )
    turn = "Suggest a good Mongoose schema for invoices"
    assert set(matches(index_of(driver, filler=10), turn)) == {"m"}
    # in a code scope such a word written as a name is a tool's
    book = belief("s", "ui_storybook", ["Storybook"], content="Components are built in Storybook.")
    turn = "msw handler not picked up in storybook"
    assert set(matches(index_of(book, filler=10), turn)) == {"s"}


def test_a_role_before_a_name_says_which_one_as_a_relation_does() -> None:
    sister = belief("t", "sister_tasha", ["Tasha"], content="Tasha is the user's younger sister.")
    index = index_of(sister, filler=10)
    assert set(matches(index, "tasha is coming for dinner on friday, easy vegan mains?")) == {"t"}
    assert matches(index, "coworker tasha is leaving the office friday, ideas for the card") == {}
    assert matches(index, "my client tasha wants the invoice split in two") == {}


def test_instead_of_in_czech_asks_to_switch_to_a_rejected_alternative() -> None:
    stan = belief(
        "s",
        "phpstan_level_8",
        ["phpstan"],
        rejected_alternatives=["Psalm"],
        content="PHPStan at level 8 runs in CI.",
    )
    index = index_of(stan, filler=10)
    assert set(matches(index, "nestaci psalm misto toho? generika me zabijou")) == {"s"}
    assert matches(index, "psalm 23 na pohreb, kterou verzi") == {}


def test_a_greek_name_without_its_last_sigma_and_accents_is_the_name() -> None:
    chief = belief("m", "chief_manolis", ["Μανώλης"], content="Μανώλης is the chief engineer.")
    index = index_of(chief, filler=10)
    # the accusative drops the "ς", the turn drops the accents, "στον" is "to the"
    assert set(matches(index, "τι να πω στον μανωλη για τη γεννητρια 2;")) == {"m"}
    assert set(matches(index, "ο Μανώλης λέει ότι η γεννήτρια ζεσταίνεται")) == {"m"}


def test_a_rare_word_typed_is_no_typo_of_a_name_one_edit_away() -> None:
    cat = belief("c", "cat_marmie", ["Marmie"], content="Marmie is their cat.")
    index = index_of(cat, filler=10)
    assert matches(index, "is marmite actually good for you or just salt") == {}
    assert set(matches(index, "marmei has been sneezing all morning")) == {"c"}
    # a version of the name is no other word: "storybook" for "storybook7"
    book = belief("s", "ui_storybook", ["storybook7"], scope=["domain:work"])
    assert set(matches(index_of(book, filler=10), "storybook stories fail to load")) == {"s"}


def test_a_name_opening_the_turn_with_its_s_is_the_user_s_own() -> None:
    cat = belief("c", "cat_snoek", ["Snoek"], content="Snoek is their cat.", scope=["domain:home"])
    dog = belief("d", "patient_tank", ["Tank"], content="Tank is a boxer the user treats.")
    index = index_of(cat, dog, filler=10)
    turn = "snoek's been in the litter box like every 10 min and hardly anything comes out"
    assert set(matches(index, turn)) == {"c"}
    assert matches(index, "snoek braai with apricot jam glaze, how long on the coals") == {}
    # an everyday word too, typed in lower case: the turn is about it
    assert set(matches(index, "tank's back, new lump on the left flank")) == {"d"}
    assert matches(index, "the tank's leaking again, how do i patch it") == {}


def test_a_name_opening_the_turn_with_the_s_of_its_genitive_is_the_user_s_own() -> None:
    home = ["domain:home"]
    ida = belief("i", "daughter_ida", ["Ida"], content="Ida is the user's daughter.", scope=home)
    mare = belief("m", "mare_bramble", ["Bramble"], content="Bramble is their mare.", scope=home)
    index = index_of(ida, mare, filler=10)
    assert set(matches(index, "idas første skoledag er 11. august, hvad skal hun have med")) == {
        "i"
    }
    # a plural of a word the dictionary lists is that word's
    assert matches(index, "brambles have taken over the bottom of the garden") == {}
