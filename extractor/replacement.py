"""What a superseding belief takes over from the one it replaces, and what it must not.

A replacement keeps the old belief's scope, pin and the names of its subject; the names of the
replaced option become rejected alternatives, never "also called"; the old directive is kept
only while it still fits (it names none of the replaced option's names).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from beliefs.model.models import Belief, dedupe_names
from beliefs.text.mentions import (
    chosen_names,
    mentions,
    moved_to,
    same_option,
    substitute,
    swapped_span,
    swapped_words,
)

MAX_ALIASES = 25
MAX_CHOSEN = 3
_WORD = re.compile(r"[A-Za-z][\w.+#-]*[\w+#]|[A-Za-z]")
_SENTENCE = re.compile(r"(?:^|[.!?;:]\s+)([A-Za-z][\w.+#-]*)")


def replaced_names(old: Belief, new: Belief, ruled_out: Sequence[str] = ()) -> list[str]:
    """The names of the option `new` replaced: those the turn ruled out, the old aliases that
    named the old option (in its content, not stated as the choice by the new content), and
    their other spellings; failing all of these, the words a two-word swap took out."""
    chosen = {n.casefold() for n in chosen_names(new.content, old.aliases)}
    named_old = [
        a
        for a in old.aliases
        if a.casefold() not in chosen
        and (mentions(old.content, a) or mentions(old.why_it_matters, a))
    ]
    found = dedupe_names([*ruled_out, *named_old])
    if not found:
        found = swapped_words(old.content, new.content)
    spelled = [a for a in old.aliases if a.casefold() not in chosen and _spells(a, found)]
    return _unique([*found, *spelled])


def inherit(old: Belief, new: Belief) -> Belief:
    """`new` as the replacement of `old`: names, rejected options, scope and pin carry over,
    except what named the replaced option; the old directive only if it still fits. The
    options `new` rules out count as replaced."""
    replaced = replaced_names(old, new, new.rejected_alternatives)
    gone = {n.casefold() for n in replaced}
    # The option chosen instead is named too, so a turn that names only it finds the belief.
    chosen = chosen_instead(old, new)
    aliases = [*new.aliases, *chosen, *(a for a in old.aliases if a.casefold() not in gone)]
    if old.canonical_name != new.canonical_name:
        aliases.append(old.canonical_name)
    # An option the new content chooses is no longer ruled out (the user came back to it).
    rejected = _unique([*new.rejected_alternatives, *replaced, *old.rejected_alternatives])
    back = {n.casefold() for n in [*chosen_names(new.content, rejected), *chosen]}
    rejected = [r for r in rejected if r.casefold() not in back]
    ruled_out = {r.casefold() for r in rejected}
    aliases = [a for a in aliases if a != new.canonical_name and a.casefold() not in ruled_out]
    why = new.why_it_matters or _still_fitting(old, new, replaced)
    return new.model_copy(
        update={
            "aliases": dedupe_names(aliases)[:MAX_ALIASES],
            "rejected_alternatives": rejected,
            "scope": list(old.scope),
            "pinned": old.pinned or new.pinned,
            "why_it_matters": why,
        }
    )


def chosen_instead(old: Belief, new: Belief) -> list[str]:
    """The names of the option `new` chose instead of the old one: what a swap of words or a
    move ("from yarn to pnpm") put in; failing both, the names (capitalised past a sentence's
    first word, or with inner capitals) its first sentence writes that the old belief never
    did."""
    swap = swapped_span(old.content, new.content)
    put_in = swap[1] if swap is not None else moved_to(new.content)
    if put_in is not None:
        return [w for w in _WORD.findall(put_in) if len(w) > 1][:MAX_CHOSEN]
    known = {w.casefold() for w in _WORD.findall(f"{old.content} {old.canonical_name}")}
    known |= {n.casefold() for n in [*old.aliases, *old.rejected_alternatives]}
    said = re.split(r"[.!?;]\s", new.content, maxsplit=1)[0]  # the statement, not asides
    first = {m.group(1) for m in _SENTENCE.finditer(said)}
    names = [
        w
        for w in _WORD.findall(said)
        if len(w) > 1
        and w.casefold() not in known
        and (any(c.isupper() for c in w[1:]) or (w[0].isupper() and w not in first))
    ]
    return _unique(names)[:MAX_CHOSEN]


def fitting_directive(old: Belief, new: Belief) -> str:
    """`new`'s directive; failing one, the old directive if it names no replaced option, or
    rewritten for the new option when the content swapped one option's words for another's."""
    replaced = replaced_names(old, new, new.rejected_alternatives)
    return new.why_it_matters or _still_fitting(old, new, replaced)


def _still_fitting(old: Belief, new: Belief, replaced: Sequence[str]) -> str:
    # Where the content swapped one run of words for another ("PostgreSQL 16" -> "CockroachDB
    # 24", "16" -> "17") or says what it moved to ("from yarn to pnpm"), the directive says
    # the same; one still naming the replaced option tells the agent to use what the user
    # abandoned, and is dropped.
    directive = old.why_it_matters
    swap = swapped_span(old.content, new.content)
    after = swap[1] if swap is not None else moved_to(new.content)
    if swap is not None:
        directive = substitute(directive, swap[0], swap[1])
    if after is not None:
        for name in sorted(chosen_names(directive, replaced), key=len, reverse=True):
            directive = substitute(directive, name, after)
    return "" if chosen_names(directive, replaced) else directive


def _spells(alias: str, names: Sequence[str]) -> bool:
    return any(same_option(alias, n) or same_option(n, alias) for n in names)


def _unique(names: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for name in dedupe_names(list(names)):
        if name.casefold() not in seen:
            seen.add(name.casefold())
            out.append(name)
    return out
