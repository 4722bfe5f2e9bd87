"""What a belief's own text says, worked out once per belief and held with what search knows
of it: the stems of its words (its world), the names it writes as names, its rejected
alternatives, its subject and its figures. The sense check (`beliefs.search.corroboration`)
weighs a turn's words against them."""

from __future__ import annotations

import re

from beliefs.index.indexed_doc import IndexedDoc
from beliefs.text.lexicon import is_common, stem
from beliefs.text.numbers import figures
from beliefs.text.query import is_telling, name_forms, written_words

# a word, or a number with its unit ("4h", "5xx", "32k"): the turn reads them as words too
_WORD = re.compile(r"[^\W\d_][^\W_+#]*[+#]*|[0-9]+[^\W\d_][^\W_]*")
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]+\b")


def domain_words(doc: IndexedDoc) -> frozenset[str]:
    """Stems of the telling words of the belief's own text (worked out once per document)."""
    if doc.domain is None:
        belief = doc.belief
        names = [belief.canonical_name.replace("_", " "), *belief.aliases]
        text = " ".join([belief.content, belief.why_it_matters or "", *names])
        doc.domain = frozenset(stem(w) for w in _WORD.findall(text.lower()) if is_telling(w))
    return doc.domain


def rejected_names(doc: IndexedDoc) -> frozenset[str]:
    """The belief's rejected alternatives as the index holds them."""
    return frozenset(t for r in doc.belief.rejected_alternatives for t in name_forms(r))


def proper_words(doc: IndexedDoc) -> frozenset[str]:
    """Tokens the belief writes as names: aliases with a capital, capitalised content words,
    acronyms aside unless they spell an everyday word."""
    if doc.proper is None:
        belief = doc.belief
        named = {t for a in belief.aliases if any(ch.isupper() for ch in a) for t in name_forms(a)}
        named.update(w for w, marked in written_words(belief.content) if marked)
        # An acronym ("PG", "CI") is not an everyday word written as a name, unless it spells
        # one ("GUT", a test framework, is "gut" too); a general word ("REST") is gated by its
        # frequency anyway.
        text = " ".join([belief.content, *belief.aliases])
        acronyms = {a.lower() for a in _ACRONYM.findall(text) if not is_common(a.lower())}
        doc.proper = frozenset(named - acronyms)
    return doc.proper


def subject(doc: IndexedDoc) -> str:
    """The belief's content's first word when written with a capital ("Hugo is her ridgeback"),
    lower-cased; "" otherwise."""
    content = doc.belief.content
    if not content[:1].isupper():
        return ""
    return content.split(maxsplit=1)[0].strip(",.:;'’").lower()


def shares_figure(doc: IndexedDoc, token: str, turn_figures: frozenset[str]) -> bool:
    """Whether the turn writes a figure (`numbers.figures`) that the belief's own text writes
    too ("move the 16:30 call" for the 16:30 pick-up, "2021 Bourgogne" for that vintage),
    other than one of the matched name's own ("UA 842 out of SFO" for "ASC 842")."""
    if not turn_figures:
        return False
    held = doc.figures
    if held is None:
        belief = doc.belief
        own = [belief.content, belief.why_it_matters or "", *belief.aliases]
        held = doc.figures = figures(" ".join([*own, *belief.rejected_alternatives]))
    return any(figure not in token for figure in turn_figures & held)
