"""A name as people type it in a hurry: without its accents, apostrophes or wide letters, and
without the @ or # of a handle or channel.

A user writes "cafe nero", "zurich", "hauptstrasse" or "oreilly" for the "Café Nero", "Zürich",
"Hauptstraße" and "O'Reilly" a belief holds (or a phone writes "o’reilly"), "@priya" for Priya
and "eng-alerts" for "#eng-alerts"; "Mueller" for "Müller", as German writes an umlaut out; in
Greek, "κατερινα" for "Κατερίνα" (without its tonos, as most people type it); in Arabic,
"اوجمنتين" for "أوجمنتين" (an alef without its hamza, a final ya without its dots, a ta marbuta
as ha, and no short-vowel marks). Matching compares such a name by its folded form too
(`beliefs.index.user_postings.UserPostings.folded_like`).
"""

from __future__ import annotations

import unicodedata

# Latin letters no decomposition takes apart, as a keyboard without them types them.
_LETTERS = str.maketrans(
    {"ł": "l", "ø": "o", "đ": "d", "ð": "d", "æ": "ae", "œ": "oe", "ı": "i", "þ": "th"}
)
_APOSTROPHES = str.maketrans("", "", "'’‘")
_LATIN_END = 0x250  # Latin-1, Latin Extended-A and -B end here
_GREEK = (0x370, 0x400)  # Greek and Coptic; Greek Extended (polytonic) decomposes into it
_MARKS = "@#"  # a handle's or a channel's
# Arabic letters as people type them in a hurry: alef with hamza or madda as alef, alef
# maqsura as ya, ta marbuta as ha; the tatweel and the short-vowel marks dropped
_ARABIC = str.maketrans(
    {"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي", "ة": "ه", "ـ": None}
    | {chr(mark): None for mark in range(0x64B, 0x653)}
)


def fold(token: str) -> str:
    """`token` without accents, apostrophes, full-width forms or a leading @ or #: "café nero"
    → "cafe nero", "hauptstraße" → "hauptstrasse", "o'reilly" → "oreilly", "ａｂｃ" → "abc",
    "@priya" → "priya", "أوجمنتين" → "اوجمنتين", "κατερίνα" → "κατερινα". A token holding a
    letter of another script keeps its marks: a kana's voicing mark, a Hangul syllable's parts
    or the breve of Cyrillic "й" are no accents."""
    if token[:1] in _MARKS and len(token) > 1:
        token = token[1:]
    if token.isascii() and "'" not in token:
        return token
    if _arabic(token):
        return token.translate(_ARABIC)
    decomposed = unicodedata.normalize("NFKD", token.casefold().translate(_APOSTROPHES))
    folded = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    if any(ch.isalpha() and ord(ch) >= _LATIN_END and not _greek(ch) for ch in folded):
        return token
    return folded.translate(_LETTERS)


def marked_apart(a: str, b: str) -> bool:
    """Whether two tokens that fold alike are written with different accents on some word
    that both write accented ("mở", to open, and "mỡ", fat; "pêche" and "péché"): each
    writer typed the accents, so they are two words, not one typed loosely. A word typed
    without its accents ("sebastian" for "sebastián") is the same word."""
    words_a, words_b = a.split(" "), b.split(" ")
    if len(words_a) != len(words_b):
        return False
    return any(
        x != y and _accented(x) and _accented(y) for x, y in zip(words_a, words_b, strict=True)
    )


def _accented(word: str) -> bool:
    """Whether `word` carries accents as `fold` drops them: Arabic's hamza and dots are how
    its letters are typed in a hurry (`_ARABIC`), not accents."""
    return (
        not word.isascii()
        and not _arabic(word)
        and any(unicodedata.combining(ch) for ch in unicodedata.normalize("NFD", word))
    )


def _arabic(token: str) -> bool:
    return any("\u0621" <= ch <= "\u0652" for ch in token)


def _greek(ch: str) -> bool:
    return _GREEK[0] <= ord(ch) < _GREEK[1]


# German writes an umlaut out when it cannot type it: "Mueller" for "Müller", "Schroeder"
_UMLAUTS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue"})


def folds(token: str, keep: bool = False) -> tuple[str, ...]:
    """The forms `token` is found under when typed loosely: `fold`ed, and with its umlauts
    written out as German writes them without the letters ("müller" -> "muller" and
    "mueller"), each once and, unless `keep`, other than `token` itself."""
    folded = fold(token)
    if token.isascii():  # no umlaut: one form (most names)
        return (folded,) if keep or folded != token else ()
    out = dict.fromkeys([folded, fold(token.translate(_UMLAUTS))])
    if not keep:
        out.pop(token, None)
    return tuple(out)
