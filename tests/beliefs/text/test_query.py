from __future__ import annotations

import pytest

from beliefs.text.query import (
    clean_query,
    name_forms,
    name_runs,
    normalize_name,
    parse_query,
    suffixed_names,
)


def test_names_index_as_one_lowercase_token() -> None:
    assert normalize_name("GitHub_Actions") == "github actions"
    assert normalize_name("Mara's") == "mara"
    assert normalize_name("  class   Hierarchies ") == "class hierarchies"
    # a word's closing full stop, as a turn's words lose it; inner ones stay
    assert normalize_name("No. 4") == "no 4"
    assert normalize_name("Dr. Frost") == "dr frost"
    assert normalize_name("U.S. visa") == "u.s visa"
    assert normalize_name("Next.js") == "next.js"
    assert normalize_name("Weights & Biases") == "weights biases"  # a turn reads no "&"
    # the punctuation around a word, as a turn's words lose it
    assert normalize_name("VTS (ECC)") == "vts ecc"
    assert normalize_name("{PLAYER_NAME}") == "player name"
    assert normalize_name("meta pii: true") == "meta pii true"
    assert normalize_name("DIVIDE()") == "divide"


def test_cleaning_removes_code_paths_urls_markup_hex_and_numbers() -> None:
    text = (
        "Why does Redis fail?\n```ts\nconst kafka = 1\n```\nsee `mongoose.connect()` in "
        "src/db/client.ts and /var/log/app.log, https://example.com/k8s?x=1 <b>bold</b> "
        "commit deadbeefcafebabe1234 took 94% of 2026-10-01 and 45 ms"
    )
    cleaned = clean_query(text)
    for gone in (
        "kafka",
        "mongoose",
        "client.ts",
        "/var/log",
        "example.com",
        "<b>",
        "deadbeef",
        "94%",
        "2026-10-01",
    ):
        assert gone not in cleaned, gone
    assert "Redis" in cleaned and "bold" in cleaned
    assert " 45 " in cleaned  # a plain number is a term: an alias may be one ("27001")
    # so is one that ends a sentence or a clause
    assert (
        parse_query("jump from Grade 6 straight to Grade 8. sensible?")
        .phrases_of(2)
        .count("grade 8")
        == 1
    )
    assert "27001" in parse_query("is ISO 27001, clause 9.2 in scope").words


def test_stack_trace_lines_are_removed() -> None:
    text = (
        "The worker crashed:\nTraceback (most recent call last):\n"
        '  File "worker.py", line 12, in run\nKeyError: kubernetes\n'
        "    at Object.<anonymous> (/app/index.js:3:9)\nany idea?"
    )
    terms = parse_query(text)
    assert "kubernetes" not in terms.words and "worker.py" not in terms.cleaned
    assert "crashed" in terms.words and "idea" in terms.words
    # the trace's file name is read as code, not as prose
    assert "worker.py" in terms.coded and "worker" in terms.coded


def test_query_is_clamped_to_1000_characters() -> None:
    assert len(clean_query("word " * 1000)) == 1000


def test_words_strip_punctuation_and_possessives_but_keep_symbols() -> None:
    terms = parse_query("fastify? TypeScript's pipe() C++ and C# with @typescript-eslint!")
    assert terms.words[:4] == ("fastify", "typescript", "pipe", "c++")
    assert "c#" in terms.words and "@typescript-eslint" in terms.words


def test_phrases_and_stop_worded_canonical_phrases() -> None:
    terms = parse_query("how does the dead letter queue work")
    assert "dead letter" in terms.phrases
    assert "the dead" in terms.phrases
    # stop words dropped before canonical n-grams: "does the" never forms one
    assert "dead letter queue" in terms.canonical_phrases
    assert not any(p.startswith(("how", "does", "the ")) for p in terms.canonical_phrases)


def test_whitespace_only_query_is_empty() -> None:
    assert parse_query("   \n\t ").empty


def test_numbers_in_brackets_are_numbers_too() -> None:
    terms = parse_query("deploy the billing service (turn 2024) again [42], v2 and 3.11")
    assert "2024" in terms.words and "42" in terms.words and "3.11" in terms.words
    assert "v2" in terms.words
    assert "turn 2024" in terms.phrases  # a plain number is a term ("ISO 27001")


def test_names_of_several_capitalised_words_are_runs() -> None:
    assert name_runs("what's Gary Lineker's podcast called?") == (("gary", "lineker"),)
    assert name_runs("does Tesla's Sentry Mode drain it") == (("tesla", "sentry", "mode"),)
    assert name_runs("my daughter is on AQA English Lit. which poems?") == (
        ("aqa", "english", "lit"),
    )
    # a sentence's first word, a list, an acronym alone, months and days are no names' words
    assert name_runs("Can Tomás cover it? ask Maya, Tomás and Gary") == ()
    # a sentence's first word starts none: "Redis Cluster keeps failing over" is the user's Redis
    assert name_runs("Redis Cluster keeps failing over") == ()
    assert name_runs("email Mark about Brightwater's March balance and the CI") == ()
    assert name_runs("EVERYTHING IN CAPITALS SAYS NOTHING") == ()
    assert parse_query("a trip on the California Zephyr").runs == (("california", "zephyr"),)


def test_a_hyphenated_word_is_also_its_parts() -> None:
    terms = parse_query("with dagster-dbt, how do I surface BaFin-Anforderungen?")
    assert {"dagster-dbt", "dagster", "dbt", "bafin", "anforderungen"} <= set(terms.words)
    assert "e" not in parse_query("an e-mail from ERC-20 holders").words  # one letter, a number


def test_a_name_holding_an_identifier_is_a_phrase_as_it_is_indexed() -> None:
    # "nginx proxy_cache" and "SOAP_PT_v3.docx" are indexed with their underscores as spaces
    terms = parse_query("is nginx proxy_cache off? O SOAP_PT_v3.docx ficou desformatado")
    assert "nginx proxy cache" in terms.phrases_of(3)
    assert "soap pt v3.docx" in terms.phrases_of(3)
    assert normalize_name("SOAP_PT_v3.docx") == "soap pt v3.docx"
    assert "proxy_cache" in terms.words  # the identifier itself stays a word


def test_an_elided_article_or_a_case_ending_leaves_the_name_a_word() -> None:
    words = parse_query("l'API de Stripe, dell'agenzia, Etsy'de kaç TL'ye, 2022.3'ten").words
    assert {"api", "agenzia", "etsy", "2022.3"} <= set(words)
    # an English contraction is no elision
    assert "don" not in parse_query("don't worry, it's fine").words


@pytest.mark.parametrize(
    ("text", "languages"),
    [
        ("how do we deploy the billing service after the migration?", set()),
        ("Ce week-end on emmène les enfants au verger, any tips?", {"fr"}),
        ("er zit elke ochtend een merel tegen mijn raam", {"nl"}),
        ("fuimos a la playa el domingo y los niños juntaron un montón de conchas", {"es"}),
        ("Zrobiłem pomiary wnęki na szafę, czy to nie za ciężkie?", {"pl"}),
        ("tuần sau mình thi IELTS speaking rồi, luyện part 2 sao cho hiệu quả", {"vi"}),
        # names are no function words: "Dan" and "Tim" are none of Indonesian
        ("is la la land worth watching with Dan and Tim", set()),
    ],
)
def test_a_turn_is_read_in_the_languages_its_function_words_say(
    text: str, languages: set[str]
) -> None:
    found = parse_query(text).languages
    # languages that share the words are read too ("el", "los": Spanish and Catalan)
    assert languages <= found and bool(found) == bool(languages)


def test_a_hosts_own_name_is_written_as_a_name() -> None:
    marked = parse_query("see https://acme.sentry.io/issues/123, mail bob@gmail.com").marked
    assert {"sentry", "gmail"} <= marked and "acme" not in marked
    assert "settings" not in parse_query("edit settings.py and README.md").marked


@pytest.mark.parametrize(
    ("turn", "words"),
    [
        ("is kafka🔥 or not", ("is", "kafka", "or", "not")),
        ("Kafka™ pricing", ("kafka", "pricing")),
        ("kafka,flink,spark", ("kafka", "flink", "spark")),
        ("kafka… maybe", ("kafka", "maybe")),
        ("ｋａｆｋａ lag", ("kafka", "lag")),
        ("1,000 rows", ("rows",)),  # a number's comma is no list
    ],
)
def test_a_word_is_read_as_typed_in_a_chat(turn: str, words: tuple[str, ...]) -> None:
    assert parse_query(turn).words == words


def test_a_name_with_its_version_typed_against_it_is_a_word_written_as_code() -> None:
    terms = parse_query("java17 records, c++20 concepts and python3.12 wheels, not s3")
    assert {"java", "c++", "python"} <= set(terms.words) & terms.marked & terms.coded
    assert "s" not in terms.words  # one letter names nothing


def test_a_name_with_a_note_in_parentheses_is_also_the_name_before_it() -> None:
    assert name_forms("Vortex (hardlink deployment broke saves)") == (
        "vortex hardlink deployment broke saves",
        "vortex",
    )
    # a note of one word is another name of the same thing
    assert name_forms("Phrase (Memsource)") == ("phrase memsource", "phrase", "memsource")
    assert name_forms("R. 71(3)") == (normalize_name("R. 71(3)"),)  # a clause, no note
    assert name_forms("Go") == ("go",)
    assert name_forms("()") == ()


def test_a_turkish_case_ending_after_an_apostrophe_marks_a_name() -> None:
    names, runs = suffixed_names("badem'in yorumları, Zeynep'le konuştum, trendyol'dan geldi")
    assert names == {"badem", "zeynep", "trendyol"}
    assert runs == ()
    # after a word of another name: a name of two words
    assert suffixed_names("orhan pamuk'un yeni kitabı") == (frozenset(), (("orhan", "pamuk"),))
    # elisions and English contractions are no case endings
    text = "le moulin n'a plus, quelqu'un m'a dit, it's what we'll do, dell'app"
    assert suffixed_names(text) == (frozenset(), ())
    assert parse_query("kardeşim dhl'de çalışıyor").runs == (("kardeşim", "dhl"),)
    assert parse_query("badem'in yorumları").suffixed == {"badem"}
