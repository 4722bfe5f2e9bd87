"""Names inflected as languages with cases write them: "Wójcikowi" for Wójcik, "w Castoramie"
for Castorama, "Sonoffów" for Sonoff, "künefenin" for künefe.

Polish, Czech, Slovak, Slovene, Serbo-Croatian, Lithuanian, Latvian, Russian, Ukrainian, Greek,
Turkish, Finnish, Hungarian and Icelandic put a case ending on a name where English puts a
preposition (Romanian and Bulgarian put their article there: "covrigul"), and may change its last
vowel before the ending, or drop the "e" of its last syllable ("klastra" for klaster, "Pekárka"
for Pekárek); Polish writes a soft last consonant with an "i" before the ending ("Śledziowi" for
Śledź) and opens a last syllable's "ó" ("Sokoła" for Sokół); Indonesian and Malay put "my" and
"your" there ("adekku"). A name of two words takes the ending on its second ("gül ustaya" for Gül
Usta). Georgian inflects its names too ("ტუშეთში" for ტუშეთი), and Cyrillic and Greek words put
back their own vowels ("пиріжка" for Пиріжок); Greek drops a masculine name's last "ς" and is
mostly typed without accents ("στον μανωλη" for Μανώλης). No stemmer the index ships reads
those (Snowball has no Polish, Czech or Ukrainian), so in a turn written in one of them
(`lexicon.turn_languages`), or for a word in Georgian's script in any turn, a word of MIN_WORD
letters or more is also read as a one-word alias it starts with, that alias being MIN_NAME
letters or more and the ending MAX_ENDING letters or fewer, the alias's last vowel perhaps
replaced or its dropped vowel put back. A turn too terse to tell its language by ("pitäiskö
sittenkin siirtyä Godotiin?") still writes a name with a capital: in a turn of any language
such a word is read so too, when English neither uses nor lists it, with an ending of
MAX_NAME_ENDING letters or fewer.

Hebrew and Arabic write "and", "the", "in", "to", "from" as letters before the word they join
("בתורנות" is "in" and "תורנות", "بالمكتب" is "in the" and "مكتب"): a word in either script is
also read as the one-word alias that is left when up to MAX_CLITICS such letters are taken off
its start (three letters or more left), as typed or as `folding.fold` types it. Such a
clause is a stemmed one: an everyday word reached so needs the belief's world (`needs_sense`).
"""

from __future__ import annotations

from itertools import pairwise
from typing import cast

from beliefs.index.bm25 import idf, label
from beliefs.index.user_postings import UserPostings
from beliefs.search.clauses import BOOST_ALIAS_WORD, STEM_FACTOR, Matched
from beliefs.text.lexicon import COMMON_ZIPF, in_dictionary, zipf
from beliefs.text.query import QueryTerms, is_telling

INFLECTING = frozenset(
    [
        *("pl", "cs", "sk", "sl", "sh", "lt", "lv", "ru", "uk", "el", "tr", "fi", "hu", "id"),
        *("ms", "ro", "is", "bg"),
    ]
)
MIN_NAME = 4
MIN_WORD = 5
MAX_ENDING = 4
# ... and in a turn of any language, for a word written as a name (a capital where no sentence
# starts: "siirtyä Godotiin", "lecę do Wrocławia") that English neither uses nor lists; no
# longer, so that a German noun's second half is no ending ("Vorschulkind")
MAX_NAME_ENDING = 3
# A name's last vowel a case ending replaces, and the vowel an ending drops from a name's last
# syllable, by the script the word is written in: Latin ("Marek" -> "Marka", "Pääjärvi" ->
# "Pääjärveltä", "niemiecki" -> "po niemiecku"), Cyrillic
# ("Олена" -> "Олену", "Пиріжок" -> "Пиріжка", "Андрій" -> "Андрія"), Greek ("Γιώργος" ->
# "Γιώργο") and Georgian ("ნანა" -> "ნანამ", "ტუშეთი" -> "ტუშეთში")
_VOWELS = ("a", "o", "e", "ă", "ı", "i", "y")
_DROPPED = ("e",)
# Georgian writes its names with case endings too, in a script no other language writes and
# wordfreq does not list: a word in it is read so in any turn
_GEORGIAN_FIRST, _GEORGIAN_LAST = "\u10d0", "\u10ff"
_GREEK_FIRST, _GREEK_LAST = "\u0370", "\u03ff"
_SCRIPT_VOWELS = (
    ("\u0400", "\u04ff", ("а", "о", "е", "я", "і", "и", "ь"), ("о", "е")),
    (_GREEK_FIRST, _GREEK_LAST, ("ος", "ας", "ης", "α", "η", "ο"), ()),
    (_GEORGIAN_FIRST, _GEORGIAN_LAST, ("ი", "ა", "ო", "ე"), ()),
)
_SOFTENED = {"z": "ź", "s": "ś", "c": "ć", "n": "ń"}  # "zi" before a vowel is "ź" at a word's end
# Letters Hebrew joins before a word (and, the, in, to, from, that, as) and Arabic's (and, so,
# in, to, as; "ال" the article, taken as a pair)
_HEBREW_CLITICS = frozenset("ובהלמשכ")
_ARABIC_CLITICS = frozenset("وفبلك")
MAX_CLITICS = 3


def match_inflected(postings: UserPostings, terms: QueryTerms, n: int, matched: Matched) -> None:
    """One-word aliases the turn names by an inflected form, into `matched` where the alias is
    not matched already (see the module)."""
    aliases = postings.aliases
    for word in terms.words:
        for rest in _without_clitics(word):
            token = rest if rest in aliases else next(iter(postings.folded_like(rest)), "")
            if token and _put(postings, n, matched, word, token):
                break
    inflecting = not terms.languages.isdisjoint(INFLECTING)
    marked = terms.marked
    for word in terms.words:
        georgian = _GEORGIAN_FIRST <= word[:1] <= _GEORGIAN_LAST
        if not (inflecting or georgian or word in marked):
            continue
        if len(word) < MIN_WORD or not word.isalpha() or not is_telling(word):
            continue
        if inflecting or georgian:
            bases = _bases(word, MAX_ENDING)
        elif not _english(word):
            bases = _bases(word, MAX_NAME_ENDING)
        else:
            continue
        greek = _GREEK_FIRST <= word[-1] <= _GREEK_LAST
        for token in bases:
            if token not in aliases:
                if not greek:  # typed without its accents, as Greek mostly is: "μανωλη"
                    continue
                token = next(iter(postings.folded_like(token)), "")
            if token and _put(postings, n, matched, word, token):
                break
    if inflecting:
        _last_inflected(postings, terms, n, matched)


def _last_inflected(postings: UserPostings, terms: QueryTerms, n: int, matched: Matched) -> None:
    """Aliases of two words the turn names with a case ending on the second ("gül ustaya" for
    "Gül Usta", "pani Kowalskiej" for "pani Kowalska"), as such languages inflect a name of
    several words: into `matched` as for one word."""
    derived = postings.derived
    firsts = cast(frozenset[str] | None, derived.get("alias-firsts"))
    if firsts is None:
        firsts = frozenset(a.split(" ", 1)[0] for a in postings.aliases if a.count(" ") == 1)
        derived["alias-firsts"] = firsts
    aliases = postings.aliases
    for first, word in pairwise(terms.sequence):
        if first not in firsts or len(word) < MIN_WORD or not word.isalpha():
            continue
        for base in _bases(word, MAX_ENDING):
            token = f"{first} {base}"
            if token not in aliases:
                continue
            if token in matched and matched[token][3] == "part":  # its first word alone
                del matched[token]
            if _put(postings, n, matched, f"{first} {word}", token):
                break


def _english(word: str) -> bool:
    """A word English uses or its dictionary lists: no inflected name."""
    return zipf(word) >= COMMON_ZIPF or in_dictionary(word)


def _put(postings: UserPostings, n: int, matched: Matched, word: str, token: str) -> bool:
    """`token`, an alias `word` names, into `matched` as a stemmed clause unless it is matched
    already; whether it was put."""
    if token in matched:
        return False
    base = BOOST_ALIAS_WORD * STEM_FACTOR * idf(n, postings.alias_df(token))
    matched[token] = (base, "alias", label(word, token), "stemmed", word)
    return True


def _bases(word: str, longest: int) -> list[str]:
    """The names `word` (all letters) may inflect, longest first: itself less an ending, and
    that with a last vowel put back ("castoramie" -> "castoram" -> "castorama") or a dropped
    "e" ("marka" -> "marek")."""
    vowels, dropped, latin = _vowels_of(word)
    # Greek's masculine names drop their last "ς" in the other cases: "Μανώλη" for Μανώλης
    out = [word + "ς"] if word[-1] in ("η", "α", "ο") else []
    for end in range(len(word) - 1, max(MIN_NAME, len(word) - longest) - 1, -1):
        stem = word[:end]
        out.append(stem)
        if latin and stem[-1] == "i" and stem[-2] in _SOFTENED:
            # Polish writes a soft consonant before a vowel with an "i": "śledziowi" -> "śledź"
            out.append(stem[:-2] + _SOFTENED[stem[-2]])
        if stem[-1] in vowels:
            if stem[-1] == "і" or stem[-1] == "и":  # "андрія" -> "андрій"
                out.append(stem + "й")
            continue
        out.extend(stem + vowel for vowel in vowels)
        if latin and stem[-2] == "o":  # Polish "ó" of a closed syllable: "sokoła" -> "sokół"
            out.append(stem[:-2] + "ó" + stem[-1])
        if stem[-2] not in vowels:
            # a vowel the ending dropped: "marka" -> "marek", "пиріжка" -> "пиріжок"
            out.extend(stem[:-1] + vowel + stem[-1] for vowel in dropped)
    return out


def _vowels_of(word: str) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """The vowels an ending replaces and those it drops, for the script of `word`'s last letter,
    and whether that script is Latin."""
    last = word[-1]
    for first, end, vowels, dropped in _SCRIPT_VOWELS:
        if first <= last <= end:
            return vowels, dropped, False
    return _VOWELS, _DROPPED, True


def _without_clitics(word: str) -> list[str]:
    """What a Hebrew or Arabic word is with one, two or three of the letters its language joins
    before a word taken off its start, three letters or more left ("בתורנות" -> "תורנות")."""
    first = word[:1]
    if "\u05d0" <= first <= "\u05ea":
        clitics = _HEBREW_CLITICS
    elif "\u0621" <= first <= "\u064a":
        clitics = _ARABIC_CLITICS
    else:
        return []
    out = []
    rest = word
    for _ in range(MAX_CLITICS):
        if rest[:2] == "ال" and len(rest) > 4:  # the article, Arabic's only clitic of two letters
            rest = rest[2:]
        elif rest[:1] in clitics and len(rest) > 3:
            rest = rest[1:]
        else:
            break
        out.append(rest)
    return out
