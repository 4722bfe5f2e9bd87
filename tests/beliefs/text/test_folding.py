"""A name typed without its accents, apostrophes or full-width letters folds to one form."""

from __future__ import annotations

import pytest

from beliefs.text.folding import fold, marked_apart


@pytest.mark.parametrize(
    ("typed", "folded"),
    [
        ("café nero", "cafe nero"),
        ("são paulo", "sao paulo"),
        ("hauptstraße", "hauptstrasse"),
        ("o'reilly", "oreilly"),
        ("o’reilly", "oreilly"),
        ("ａｂｃ bank", "abc bank"),
        ("łódź", "lodz"),
        ("redis", "redis"),
        ("@priya", "priya"),
        ("#eng-alerts", "eng-alerts"),
    ],
)
def test_a_latin_name_folds_to_how_it_is_typed_in_a_hurry(typed: str, folded: str) -> None:
    assert fold(typed) == folded


@pytest.mark.parametrize(
    ("typed", "folded"),
    [
        ("κατερίνα", "κατερινα"),  # the tonos, as most people type without it
        ("Νίκος", "νικοσ"),  # a final sigma is a sigma
        ("ἀθῆναι", "αθηναι"),  # polytonic breathings and accents
        ("κατερινα", "κατερινα"),
    ],
)
def test_a_greek_name_folds_to_how_it_is_typed_in_a_hurry(typed: str, folded: str) -> None:
    assert fold(typed) == folded
    assert fold(folded) == folded


@pytest.mark.parametrize("token", ["がっこう", "풋살", "москва", "йогурт", "café東京"])
def test_a_name_of_another_script_keeps_its_marks(token: str) -> None:
    # a kana's voicing mark or a Hangul syllable's parts are no accents
    assert fold(token) == token


@pytest.mark.parametrize(
    ("typed", "folded"),
    [
        ("أوجمنتين", "اوجمنتين"),  # an alef with its hamza
        ("إسكندرية", "اسكندريه"),  # with its hamza below, and a ta marbuta
        ("مُحَمَّد", "محمد"),  # short-vowel marks
        ("مستشفى", "مستشفي"),  # an alef maqsura
    ],
)
def test_an_arabic_name_folds_to_how_it_is_typed_in_a_hurry(typed: str, folded: str) -> None:
    assert fold(typed) == folded
    assert fold(folded) == folded


@pytest.mark.parametrize(
    ("one", "other", "apart"),
    [
        ("mở", "mỡ", True),  # to open, and fat: both typed with their tones
        ("pêche", "péché", True),
        ("sebastian piñera", "sebastián piñera", False),  # one word typed without its accent
        ("cafe nero", "café nero", False),
        ("zürich", "zuerich", False),
        ("o'reilly", "oreilly", False),
        ("mở cửa", "mỡ", False),  # not the same number of words: not judged
        ("أحمد", "إحمد", False),  # a hamza above or below: how Arabic is typed, no accent
    ],
)
def test_two_words_accented_apart_are_two_words(one: str, other: str, apart: bool) -> None:
    assert marked_apart(one, other) is apart
    assert marked_apart(other, one) is apart
