"""Names written with a Turkish case ending after an apostrophe: Turkish writes one on every
proper name ("badem'in", "Zeynep'le", "trendyol'dan", "selin'e"), however the name is cased, so
the apostrophe says a word is a name as a capital does in English."""

from __future__ import annotations

import re

from beliefs.text.lexicon import is_function_word, is_function_word_elsewhere
from beliefs.text.punctuation import LEAD_PUNCT, RUN_BREAKS, TRAIL_PUNCT

# A name of two letters or more, an apostrophe and a case ending: of (-in), to (-e), at (-de),
# from (-den), with (-le), the plural (-ler) and "is" (-dir), with their vowels' harmony. Not an
# elision ("m'a", "d'un", "quelqu'un", "dell'app"), whose word before the apostrophe is a
# letter or a word of its own language, nor an English possessive or contraction.
_TURKISH_ENDING = re.compile(
    r"([^\W\d_]{2,})['’]"
    r"((?:[ny])?[ıiuü]n?|y?[ae]|n?[dt][ae](?:n|ki)?|y?l[ae]|l[ae]r[ıi]?|[dt][ıiuü]r)"
)
_ELIDED = frozenset(
    ["quelqu", "jusqu", "lorsqu", "puisqu", "presqu", "dell", "nell", "sull", "dall", "all"]
)


def suffixed_names(text: str) -> tuple[frozenset[str], tuple[tuple[str, ...], ...]]:
    """The names of `text` written with a Turkish case ending after an apostrophe, without it,
    when written alone; and as names of two words, those written after a word that is no
    function word ("orhan pamuk'un": the writer's Pamuk, not the user's cat Pamuk)."""
    alone: set[str] = set()
    runs: list[tuple[str, ...]] = []
    before, ended = "", True  # the word before and whether a break ended it
    for raw in text.split():
        word = raw.strip(LEAD_PUNCT).rstrip(TRAIL_PUNCT).lower()
        match = _TURKISH_ENDING.fullmatch(word)
        if match is not None and match.group(1) not in _ELIDED:
            name = match.group(1)
            if not ended and _names(before):
                runs.append((before, name))
            else:
                alone.add(name)
        before, ended = word, raw[-1] in RUN_BREAKS
    return frozenset(alone), tuple(runs)


def _names(word: str) -> bool:
    """Whether `word` may be a word of a name: letters, and no function word of any language
    (read only before a suffixed name, not for every word of the turn)."""
    return word.isalpha() and not (is_function_word(word) or is_function_word_elsewhere(word))
