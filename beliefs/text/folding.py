"""A name as people type it in a hurry: without its accents, apostrophes or wide letters, and
without the @ or # of a handle or channel.

A user writes "cafe nero", "zurich", "hauptstrasse" or "oreilly" for the "Café Nero", "Zürich",
"Hauptstraße" and "O'Reilly" a belief holds (or a phone writes "o’reilly"), "@priya" for Priya
and "eng-alerts" for "#eng-alerts". Matching compares such a name by its folded form too
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
_MARKS = "@#"  # a handle's or a channel's


def fold(token: str) -> str:
    """`token` without accents, apostrophes, full-width forms or a leading @ or #: "café nero"
    → "cafe nero", "hauptstraße" → "hauptstrasse", "o'reilly" → "oreilly", "ａｂｃ" → "abc",
    "@priya" → "priya". A token holding a letter of another script keeps its marks: a kana's
    voicing mark or a Hangul syllable's parts are no accents."""
    if token[:1] in _MARKS and len(token) > 1:
        token = token[1:]
    if token.isascii() and "'" not in token:
        return token
    decomposed = unicodedata.normalize("NFKD", token.casefold().translate(_APOSTROPHES))
    folded = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    if any(ch.isalpha() and ord(ch) >= _LATIN_END for ch in folded):
        return token
    return folded.translate(_LETTERS)
