"""A remembered statement's own names: a canonical name and aliases from its salient words.

Search matches canonical names and aliases, never content, so a statement stored without
aliases is found only by its name. "Every payment call must carry an idempotency key." is named
`payment_idempotency_key`, with the aliases "idempotency key" and "idempotency": a turn asking
about idempotency receives it. Deterministic and local: no model call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from beliefs.text.lexicon import EVERYDAY_ZIPF, FUNCTION_ZIPF, GENERAL_ZIPF, zipf
from beliefs.text.query import STOP_WORDS, written_words

MAX_NAME_WORDS = 4
MAX_PHRASE_WORDS = 3
MAX_ALIASES = 6
_CLAUSE = re.compile(r"[,.;:!?()\[\]{}\"“”]+\s|[,;:!?()\[\]{}\"“”]+|\.$")


@dataclass(frozen=True)
class StatementNames:
    canonical_name: str
    aliases: tuple[str, ...]


@dataclass(frozen=True)
class _Run:
    """Adjacent salient words of one clause: a phrase of the statement."""

    words: tuple[str, ...]
    rarity: float  # the lowest word frequency in it: lower is more telling
    named: bool  # a word of it is written as a name ("Stripe", "GitHub")


def statement_names(statement: str) -> StatementNames:
    """The name and aliases a statement's own words give it (empty name: no salient word)."""
    runs = _runs(statement)
    if not runs:
        return StatementNames("", ())
    # The two most telling phrases, in the statement's order: the subject usually comes first.
    best = sorted(sorted(runs, key=lambda r: r.rarity)[:2], key=runs.index)
    name_words = [w for run in best for w in run.words][:MAX_NAME_WORDS]
    aliases: list[str] = []
    for run in runs:
        if len(run.words) > 1:
            aliases.append(" ".join(run.words))
        aliases += [w for w in run.words if _telling(w) or run.named]
    name = "_".join(name_words)
    kept = [a for a in dict.fromkeys(aliases) if a.replace(" ", "_") != name]
    return StatementNames(name, tuple(kept[:MAX_ALIASES]))


def _runs(statement: str) -> list[_Run]:
    runs: list[_Run] = []
    for clause in _CLAUSE.split(statement):
        current: list[tuple[str, bool]] = []
        for word, named in [*written_words(clause), ("", False)]:
            joins = bool(word) and (named or _joins(word))
            if joins and (current or named or _salient(word)):
                current.append((word, named))
            if current and (not joins or len(current) == MAX_PHRASE_WORDS):
                runs.append(_run(current))
                current = []
    return runs


def _run(words: list[tuple[str, bool]]) -> _Run:
    return _Run(
        tuple(w for w, _ in words),
        min(zipf(w) for w, _ in words),
        any(named for _, named in words),
    )


def _salient(word: str) -> bool:
    # A phrase starts at a word rare enough to name something ("payment", "idempotency").
    return _joins(word) and zipf(word) < GENERAL_ZIPF


def _joins(word: str) -> bool:
    # Stop words and function words ("must", "every", "call") end a phrase; a general word
    # may continue one ("idempotency key").
    return len(word) > 1 and word not in STOP_WORDS and zipf(word) < FUNCTION_ZIPF


def _telling(word: str) -> bool:
    # Alone, only a word rarer than everyday ones names the subject ("idempotency", "staging");
    # "carry" or "payment" by themselves would pull the belief into unrelated turns.
    return zipf(word) < EVERYDAY_ZIPF
