"""What the search knows about English words: their stems and how common they are.

Stems come from the Snowball English stemmer (PyStemmer). How common a word is comes from
wordfreq's English frequency list, which ships inside the package (nothing is downloaded); its
Zipf scale is log10 of a word's frequency per billion words, so 3 is once per million words.
Frequency alone cannot tell an everyday word from a frequent name: "jenkins" (3.8) is as common
as "rust" (3.7) because it is a surname. So a word counts as everyday only when a dictionary
also lists it in lower case (Webster's word list and the GNU Collaborative International
Dictionary of English, both shipped by `english-words`; the second holds newer words such as
"airflow" and "database"): "rust", "flask" and "slack" are there, "jenkins" and "django" are
not, and "kafka" only as a name.

The lists are held as compact tables (`beliefs.text.word_table`), ~10 MB rather than the ~70 MB
of the packages' own dicts, lists and sets, with the same answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache, lru_cache

import Stemmer

from beliefs.text.word_table import (
    WordTable,
    frequency_table,
    lower_case_entries,
    zipf_frequency,
    zipf_of_bin,
)

# Once per million words or more: an everyday word ("go", "make", "rest", "flask", "spark"),
# so an alias spelled that way needs corroboration before it counts.
COMMON_ZIPF = 3.0
# Frequent enough that a word this common is an everyday word even where the dictionary does
# not list it ("database", "email", "app"); surnames and product names stay below ("jenkins"
# is 3.8).
EVERYDAY_ZIPF = 4.25
# Once per ten thousand words or more ("language", "use", "version"): too general to name a
# thing by itself, and too general to corroborate one.
GENERAL_ZIPF = 5.0

# Once per million words or more in English, though no English dictionary lists it in lower
# case: a word others use in another sense, a first name ("Gary"), a place or a figure
# ("Vancouver", "Loki").
OTHER_SENSE_ZIPF = 3.0
# Once per hundred thousand words or more in one of OTHER_LANGUAGES: an everyday word or a
# common first name there ("chispa", "Zustand", "Tomás", "Hélène").
ELSEWHERE_ZIPF = 4.0
# Latin-script languages whose everyday words turns hold (wordfreq's small lists: the words
# used at least once per million, which is all this asks)
OTHER_LANGUAGES = ("fr", "es", "de", "it", "pt", "nl")
# Languages a turn may be written in besides English, told by their function words: wordfreq's
# small lists that its regular expression splits into words (Chinese, Japanese and Korean need
# a segmenter it does not ship). In a turn written in one of them, that language's everyday
# words have another sense as English ones do in an English turn ("verger", "çamur", "merel").
TURN_LANGUAGES = (
    *OTHER_LANGUAGES,
    *("pl", "tr", "ca", "sv", "da", "nb", "fi", "cs", "ro", "hu", "id", "ms", "vi"),
    *("fil", "sk", "sl", "lt", "lv", "sh", "is"),
    *("ru", "uk", "bg", "el", "hi"),
)
# A turn holding this many function words of a language, or more, is written in it (in part).
LANGUAGE_WORDS = 2

# Once per 300 words or more ("use", "sure", "second", "with"): words of any sentence, which
# tie a turn to nothing.
FUNCTION_ZIPF = 5.5

_STEMMER = Stemmer.Stemmer("english")


# British spellings of the -ize and -yze verbs and their nouns ("notarising", "analysed",
# "serialiser", "organisation"), stemmed as the American ones are: Snowball's English stemmer
# leaves "notaris" beside "notar".
_BRITISH_ENDINGS = ("e", "es", "ed", "ing", "er", "ers", "ation", "ations")
_BRITISH = re.compile(rf"(?<=[a-z]{{3}})([iy])s({'|'.join(_BRITISH_ENDINGS)})$")
_BRITISH_ENDS = tuple(f"s{ending}" for ending in _BRITISH_ENDINGS)  # no pattern run for others


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Snowball stem of one lower-cased word ("dashboards" -> "dashboard"), a British
    -ise or -yse spelling as the American one ("notarising" -> "notar", as "notarize")."""
    if word.endswith(_BRITISH_ENDS):
        word = _BRITISH.sub(r"\1z\2", word)
    return str(_STEMMER.stemWord(word))


def stem_phrase(token: str) -> str:
    """Each word of a space-separated token stemmed ("feature flags" -> "featur flag")."""
    if " " not in token:
        return stem(token)
    return _stem_words(token)


@lru_cache(maxsize=200_000)
def _stem_words(token: str) -> str:
    return " ".join(stem(w) for w in token.split(" "))


@cache
def _frequencies(lang: str, wordlist: str) -> WordTable:
    from wordfreq import available_languages  # its import takes ~0.1 s, the table ~0.25 s

    return frequency_table(available_languages(wordlist)[lang])


@lru_cache(maxsize=200_000)
def zipf(word: str) -> float:
    """How common `word` is in English (0 for words the list does not know, and for a word
    written with symbols the list drops: `dropped_symbols`)."""
    if dropped_symbols(word):
        return 0.0
    return zipf_frequency(_frequencies("en", "best"), word, "en")


_NAME_SYMBOLS = frozenset("+#&/")


def dropped_symbols(word: str) -> bool:
    """Whether wordfreq's lists cannot hold `word` as written: their tokens drop the symbols
    that make a name ("c++", "c#", "w&b", "ci/cd", ".net" would be read as "c", "c", "w b",
    "ci cd" and "net"). Such a word names one thing: it has no everyday sense."""
    if word[:1] == "." and word[1:2].isalnum():
        return True
    return any(ch in _NAME_SYMBOLS for ch in word)


@lru_cache(maxsize=1)
def _dictionary() -> WordTable:
    return lower_case_entries(["web2", "gcide"])  # only lower-case entries are asked for


@lru_cache(maxsize=50_000)  # a binary search over the table's blob, ~4 µs: turns repeat words
def in_dictionary(word: str) -> bool:
    """Whether the dictionary lists `word` in lower case (a common noun, verb or adjective)."""
    return word in _dictionary()


def is_common(word: str) -> bool:
    """An everyday English word: a name spelled so is ambiguous.

    Frequent enough, and either a dictionary word (or the plural of one), or so frequent that a
    name rarely is (the dictionary predates "database" and "email")."""
    frequency = zipf(word)
    if frequency < COMMON_ZIPF:
        return False
    if frequency >= EVERYDAY_ZIPF or in_dictionary(word):
        return True
    single = word[:-1] if word.endswith("s") else ""  # "flags"; "jenkins" is no plural of "jenkin"
    return bool(single) and zipf(single) >= frequency and in_dictionary(single)


def rare_word(word: str) -> bool:
    """A word the dictionary lists, rarer than COMMON_ZIPF ("brisket", "marmite", "crumpet"):
    typed in lower case it is that thing, unless the turn says it is a name a belief gives it
    (a dog called Brisket)."""
    return len(word) >= 3 and in_dictionary(word) and zipf(word) < COMMON_ZIPF


@lru_cache(maxsize=200_000)
def zipf_elsewhere(word: str) -> float:
    """How common `word` is in the most common of OTHER_LANGUAGES (0 for none of them)."""
    if not word.isalpha():
        return 0.0
    return max(_zipf_in(word, lang) for lang in OTHER_LANGUAGES)


def _zipf_in(word: str, lang: str) -> float:
    """How common `word` is in `lang` (wordfreq's small list: 0 below once per million, and
    for a word written with symbols the list drops: `dropped_symbols`)."""
    if dropped_symbols(word):
        return 0.0
    return zipf_frequency(_frequencies(lang, "small"), word, lang)


@lru_cache(maxsize=100_000)  # about 20 asks a turn, of words turns repeat
def has_other_sense(word: str, languages: frozenset[str] = frozenset()) -> bool:
    """A word with a sense besides the one a belief gives it: an everyday English word, or one
    frequent in English or another language though no dictionary lists it ("maya", "tomás",
    "loki", "chispa"): a name it shares with other people, places and things. `languages`:
    those the turn is written in (`turn_languages`), whose everyday words count as English ones
    do ("verger" in a French turn)."""
    in_script = zipf_in_script(word)
    if in_script is not None and in_script >= ELSEWHERE_ZIPF:
        return True  # "하나", "노트북", "クロ", "Москва": an everyday word or name of its language
    if any(ch.isdigit() for ch in word):
        # a code ("q1", "s3", "ec2", "live-2041"; word frequencies split the last into "live"
        # and "2041"): typed as the user types their tool's or ticket's name
        return False
    if is_common(word):
        return True
    if len(word) < 3:
        # two letters ("pg", "ci"): an abbreviation, not a first name or a word of another
        # language
        return False
    if zipf(word) >= OTHER_SENSE_ZIPF or zipf_elsewhere(word) >= ELSEWHERE_ZIPF:
        return True
    return everyday_in(word, languages)


# The languages each script writes: (first, last) code points -> wordfreq's languages with a
# small list (Han alone is Chinese or Japanese). Not Arabic, Hebrew or the Indic scripts: with
# no capitals to write a name as one, their users' own people ("איתי", "أحمد") bear names as
# common as words, and gating those lost as many cases as it won.
_SCRIPTS = (
    ((0xAC00, 0xD7A3), ("ko",)),
    ((0x1100, 0x11FF), ("ko",)),
    ((0x3130, 0x318F), ("ko",)),
    ((0x3040, 0x30FF), ("ja",)),
    ((0x4E00, 0x9FFF), ("zh", "ja")),
    ((0x0400, 0x04FF), ("ru", "uk", "bg", "mk")),
    ((0x0370, 0x03FF), ("el",)),
)


def zipf_in_script(word: str) -> float | None:
    """How common `word`, written in a script other than Latin (`_SCRIPTS`), is in the
    languages that script writes (the most common of them), or None for a word in none of
    those scripts: the script says the language, whatever words the turn holds besides. Looked
    up whole in wordfreq's small list: Chinese, Japanese and Korean put no space between words,
    and the list's words are what its segmenter splits (which the package does not ship), so a
    word of the list is one it split. Traditional characters are not read as simplified ones."""
    if word.isascii():
        return None
    languages = _script_languages(word)
    if not languages:
        return None
    best = 0.0
    for lang in languages:
        index = _frequencies(lang, "small").value(word)
        if index is not None:
            best = max(best, zipf_of_bin(index))
    return best


def _script_languages(word: str) -> tuple[str, ...]:
    """The languages of `word`'s first letter of a script of `_SCRIPTS` other than Han, or of
    its Han letters when it has none (a kana after Han makes the word Japanese: "斎藤さん")."""
    han = False
    for ch in word:
        point = ord(ch)
        for (first, last), languages in _SCRIPTS:
            if first <= point <= last:
                if languages != ("zh", "ja"):
                    return languages
                han = True
    return ("zh", "ja") if han else ()


def everyday_in(word: str, languages: frozenset[str]) -> bool:
    """Whether `word` is at least once per million words in one of `languages` (a turn's own,
    `turn_languages`): "zustand" in a German turn, "verger" in a French one."""
    return any(_zipf_in(word, lang) >= COMMON_ZIPF for lang in languages)


def turn_languages(words: Iterable[str]) -> frozenset[str]:
    """The languages of TURN_LANGUAGES a turn is written in, wholly or in part: the one of
    which it holds the most function words, at least LANGUAGE_WORDS (all of those tied: "el",
    "los" are Spanish and Catalan). "On va à la crêperie ce soir" is French, and so is
    "Combien de D+ je devrais viser … and I've only done 2,200 m" (English is always read)."""
    function_words = _function_words()
    counts: dict[str, int] = {}
    for word in set(words):
        for lang in function_words.get(word, ()):
            counts[lang] = counts.get(lang, 0) + 1
    most = max(counts.values(), default=0)
    if most < LANGUAGE_WORDS:
        return frozenset()
    return frozenset(lang for lang, count in counts.items() if count == most)


@cache
def _function_words() -> dict[str, tuple[str, ...]]:
    """The words of any sentence in each of TURN_LANGUAGES (FUNCTION_ZIPF or more there) that
    are not general English words ("les", "und", "się", "của"; not "a", "in", "me"), each with
    its languages."""
    from wordfreq import available_languages, read_cBpack

    out: dict[str, list[str]] = {}
    paths = available_languages("small")
    for lang in TURN_LANGUAGES:
        for index, words in enumerate(read_cBpack(paths[lang])):
            if zipf_of_bin(index) < FUNCTION_ZIPF:
                break
            for word in words:
                if not is_general(word):
                    out.setdefault(word, []).append(lang)
    return {word: tuple(langs) for word, langs in out.items()}


def is_general(word: str) -> bool:
    """A word too frequent to name or corroborate anything by itself."""
    return zipf(word) >= GENERAL_ZIPF


def is_function_word(word: str) -> bool:
    return zipf(word) >= FUNCTION_ZIPF


def is_function_word_in(word: str, languages: frozenset[str]) -> bool:
    """A word of any sentence in one of `languages` (a turn's own, `turn_languages`): "mijn"
    in a Dutch turn, "på" in a Norwegian one, not "dag" nor "mot" in an English one."""
    return not languages.isdisjoint(_function_words().get(word, ()))


def is_function_word_elsewhere(word: str) -> bool:
    """A word of any sentence in another language ("ma", "que", "elle"): it ties a French or
    Spanish turn to nothing."""
    return zipf_elsewhere(word) >= FUNCTION_ZIPF


def warm() -> None:
    """Load the frequency and word lists now rather than on the first turn that needs them."""
    zipf("the")
    zipf_elsewhere("the")
    in_dictionary("the")
    _function_words()
