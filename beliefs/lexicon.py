"""What the search knows about English words: their stems and how common they are.

Stems come from the Snowball English stemmer (PyStemmer). How common a word is comes from
wordfreq's English frequency list, which ships inside the package (nothing is downloaded); its
Zipf scale is log10 of a word's frequency per billion words, so 3 is once per million words.
"""

from __future__ import annotations

from functools import lru_cache

import Stemmer

# Once per million words or more: an everyday word ("go", "make", "rest", "flask", "spark"),
# so an alias spelled that way needs corroboration before it counts.
COMMON_ZIPF = 3.0
# Once per ten thousand words or more ("language", "use", "version"): too general to name a
# thing by itself, and too general to corroborate one.
GENERAL_ZIPF = 5.0

# Once per 300 words or more ("use", "sure", "second", "with"): words of any sentence, which
# tie a turn to nothing.
FUNCTION_ZIPF = 5.5

_STEMMER = Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Snowball stem of one lower-cased word ("dashboards" -> "dashboard")."""
    return str(_STEMMER.stemWord(word))


def stem_phrase(token: str) -> str:
    """Each word of a space-separated token stemmed ("feature flags" -> "featur flag")."""
    return " ".join(stem(w) for w in token.split(" "))


@lru_cache(maxsize=200_000)
def zipf(word: str) -> float:
    """How common `word` is in English (0 for words the list does not know)."""
    from wordfreq import zipf_frequency  # its import and first lookup take ~0.6 s

    return float(zipf_frequency(word, "en"))


def is_common(word: str) -> bool:
    """An everyday English word: a name spelled so is ambiguous."""
    return zipf(word) >= COMMON_ZIPF


def is_general(word: str) -> bool:
    """A word too frequent to name or corroborate anything by itself."""
    return zipf(word) >= GENERAL_ZIPF


def is_function_word(word: str) -> bool:
    return zipf(word) >= FUNCTION_ZIPF


def warm() -> None:
    """Load the frequency list now rather than on the first turn that needs it."""
    zipf("the")
