"""The compact word tables answer exactly what wordfreq and english-words answer, for every word
of their lists and for spellings the lists do not hold."""

from __future__ import annotations

import random
import string
from collections.abc import Iterator

import pytest
import wordfreq
from english_words import get_english_words_set

from beliefs.text import lexicon
from beliefs.text.word_table import (
    WordTable,
    frequency_table,
    lower_case_entries,
    zipf_frequency,
)
from tests.child_python import run_python

ODD_SPELLINGS = (
    *("", " ", "  the  ", "the cat", "-", "'", "...", "e-mail", "a.b", "ab\x00c", "the\n"),
    *("ec2", "s3", "q1", "1st", "2024", "1985", "3000", "007", "0.5", "1,000", "b2b", "mp3"),
    *("don't", "l'homme", "o'reilly", "'tis", "rock'n'roll", "don\u2019t", "dogs'", "it's"),
    *("café", "cafe\u0301", "naïve", "tomás", "hélène", "zürich", "straße", "ñandú", "chispa"),
    *("The", "NASA", "Python", "İstanbul", "ǅ", "ΣΊΣΥΦΟΣ", "Zustand", "ÉCOLE", "McDonald"),
    *("東京", "日本語", "москва", "ελληνικά", "😀", "ﬁle", "\udc80abc", "ab\udc80", "x\u200by"),
)


def _sample_spellings(listed: list[str], seed: int) -> Iterator[str]:
    """Odd spellings, random letter strings, and listed words recased or with digits."""
    rng = random.Random(seed)
    yield from ODD_SPELLINGS
    for _ in range(3000):
        yield "".join(rng.choices(string.ascii_lowercase, k=rng.randint(1, 12)))
    for word in rng.sample(listed, 3000):
        yield from (word.upper(), word.title(), word + "s", word + "2", "9" + word, word + "'s")


def _english_words() -> list[str]:
    return list(wordfreq.iter_wordlist("en"))


def test_english_zipf_is_wordfreqs_for_every_listed_word_and_odd_spellings() -> None:
    table = frequency_table(wordfreq.available_languages("best")["en"])
    listed = _english_words()
    assert len(table) == len(listed)
    for word in [*listed, *_sample_spellings(listed, 1)]:
        assert zipf_frequency(table, word, "en") == wordfreq.zipf_frequency(word, "en"), word


@pytest.mark.parametrize("lang", lexicon.OTHER_LANGUAGES)
def test_other_languages_zipf_is_wordfreqs_small_list(lang: str) -> None:
    table = frequency_table(wordfreq.available_languages("small")[lang])
    listed = list(wordfreq.iter_wordlist(lang, "small"))
    assert len(table) == len(listed)
    for word in [*listed, *_sample_spellings(listed, 2)]:
        expected = wordfreq.zipf_frequency(word, lang, wordlist="small")
        assert zipf_frequency(table, word, lang) == expected, word


def test_dictionary_holds_exactly_the_lower_case_entries_of_web2_and_gcide() -> None:
    entries = get_english_words_set(["web2", "gcide"], alpha=True, lower=False)
    expected = frozenset(w for w in entries if w.islower())
    table = lower_case_entries(["web2", "gcide"])
    assert len(table) == len(expected)
    assert list(table.words()) == sorted(expected)
    listed = sorted(entries)
    for word in [*listed, *_sample_spellings(listed, 3), *_sample_spellings(_english_words(), 4)]:
        assert (word in table) == (word in expected), word


def test_the_lexicon_answers_as_wordfreq_and_english_words_do() -> None:
    entries = get_english_words_set(["web2", "gcide"], alpha=True, lower=False)
    dictionary = frozenset(w for w in entries if w.islower())
    words = [*ODD_SPELLINGS, "the", "rust", "jenkins", "flask", "chispa", "tomás", "elle", "que"]
    for word in words:
        assert lexicon.zipf(word) == wordfreq.zipf_frequency(word, "en"), word
        elsewhere = 0.0
        if word.isalpha():
            langs = lexicon.OTHER_LANGUAGES
            elsewhere = max(wordfreq.zipf_frequency(word, lang, "small") for lang in langs)
        assert lexicon.zipf_elsewhere(word) == elsewhere, word
        assert lexicon.in_dictionary(word) == (word in dictionary), word
    # wordfreq drops a name's symbols and answers for what is left ("c", "w b"): the lexicon
    # knows no such word, in English or in the turn's own language.
    for word in ("c++", "c#", "w&b", "ci/cd", ".net", "notepad++"):
        assert wordfreq.zipf_frequency(word, "en") > 0 and lexicon.zipf(word) == 0, word
        assert not lexicon.has_other_sense(word, frozenset(["es", "fr"])), word


def test_warming_loads_every_list_without_wordfreqs_own_dicts() -> None:
    code = (
        "import wordfreq\n"
        "from beliefs.text import lexicon\n"
        "lexicon.warm()\n"
        "print(lexicon._frequencies.cache_info().currsize,"
        " lexicon._dictionary.cache_info().currsize,"
        " wordfreq.get_frequency_dict.cache_info().currsize,"
        " wordfreq.get_frequency_list.cache_info().currsize)\n"
    )
    out = run_python(code)
    assert out.split() == [str(1 + len(lexicon.OTHER_LANGUAGES)), "1", "0", "0"]


def test_a_word_given_twice_keeps_its_last_value_as_a_dict_would() -> None:
    words = ["b", "a", "é", "b", "ab", "a"]
    values = [1, 2, 3, 4, 5, 6]
    table = WordTable(words, values)
    expected = dict(zip(words, values, strict=True))
    assert len(table) == len(expected)
    assert list(table.words()) == ["a", "ab", "b", "é"]  # UTF-8 byte order
    for word in [*expected, "", "c", "aa", "e", "É", "\udc80"]:
        assert table.value(word) == expected.get(word), word


def test_a_table_without_values_is_a_set() -> None:
    table = WordTable(["rust", "flask", "rust"])
    assert list(table.words()) == ["flask", "rust"]
    assert "rust" in table and "flask" in table
    assert "Rust" not in table and "" not in table and 3 not in table
    assert WordTable([]).value("a") is None and "a" not in WordTable([])


def test_a_table_is_far_smaller_than_the_dict_it_replaces() -> None:
    table = frequency_table(wordfreq.available_languages("best")["en"])
    assert table.nbytes() < 15 * len(table)  # a dict costs ~100 bytes a word
