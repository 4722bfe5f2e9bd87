"""Words written as one of several ("Blockkommutierung", "Abgabetermin", "brandwerendheid"):
a turn's compound holding a word of the belief's own text ties the turn to the belief's world
as that word alone would (`beliefs.search.corroboration`)."""

from __future__ import annotations

from beliefs.text.lexicon import COMMON_ZIPF, zipf
from beliefs.text.query import QueryTerms

COMPOUND = 10  # letters of a word that may be several written as one ("Blockkommutierung")
COMPOUND_PART = 6  # letters of a word of the belief's own found inside one
_INFLECTION = 3  # letters a compound may end with past its last part ("Abgabeterminen")


def compounds(terms: QueryTerms) -> tuple[str, ...]:
    """The turn's long words rarer in English than once per million words: words of a
    language that writes several words as one."""
    return tuple(
        w
        for w in dict.fromkeys(terms.sequence)
        if len(w) >= COMPOUND and w.isalpha() and zipf(w) < COMMON_ZIPF
    )


def inside_compound(words: tuple[str, ...], domain: frozenset[str], own: frozenset[str]) -> str:
    """The first of `words` (`compounds`) that ends with a word of the belief's own text
    (`domain`, stems of COMPOUND_PART letters or more, not the matched name's `own`) after a
    word of its own ("kommutierung" in "Blockkommutierung"); "" for none."""
    for word in words:
        for part in domain:
            if len(part) < COMPOUND_PART or part in own:
                continue
            at = word.find(part, _INFLECTION)
            if at >= _INFLECTION and len(word) - at - len(part) <= _INFLECTION:
                return word
    return ""
