"""The alias flywheel's rules: which surface forms may become aliases of which belief.

A name becomes an alias only if the user wrote it, it is short, it says something (not only
stop words), and no other live belief of the user already answers to it. The deterministic rule
catches re-explanations ("by the cluster thing I mean Kubernetes"); the model proposes the rest,
and its proposals pass the same checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from beliefs.model.models import Belief
from beliefs.text.query import STOP_WORDS, normalize_name
from compaction.plan import AliasAddition

MAX_ALIAS_WORDS = 4
MAX_ALIAS_CHARS = 60

# Words that never name anything on their own.
_VAGUE = frozenset(
    {
        "it", "them", "they", "he", "she", "you", "me", "us", "one",
        "thing", "things", "stuff", "those", "these", "there", "here",
    }
)  # fmt: skip
_Q = "\"'“”‘’"
_ALIAS = rf"[{_Q}]?(?P<alias>[^{_Q}.,;:!?()\n]{{2,60}}?)[{_Q}]?"
_NAME = r"(?P<name>[\w.+#/-]+(?: [\w.+#/-]+){0,3})"
_RE_EXPLAINED = [
    # by "the cluster thing" I mean Kubernetes / when I say X, I'm talking about Y
    re.compile(
        rf"\b(?:by|when i say|when i talk about|when i mention)\s+{_ALIAS},?\s+"
        rf"(?:i mean|i'm talking about|i am talking about|i'm referring to|i refer to)\s+"
        rf"(?:the\s+)?{_NAME}",
        re.IGNORECASE,
    ),
    # "the cluster thing" means / is / = / i.e. Kubernetes
    re.compile(
        rf"[{_Q}](?P<alias>[^{_Q}\n]{{2,60}})[{_Q}],?\s*\(?\s*(?:i\.e\.?|aka|a\.k\.a\.?|means|"
        rf"meaning|that is|which is|is|=)\s+(?:the\s+)?{_NAME}",
        re.IGNORECASE,
    ),
    # Kubernetes, aka / which I call / also known as "the cluster thing"
    re.compile(
        rf"{_NAME},?\s+(?:aka|a\.k\.a\.?|also known as|which i call|what i call|that i call|"
        rf"i call it)\s+[{_Q}]?(?P<alias>[^{_Q}.,;:!?()\n]{{2,60}})[{_Q}]?(?=[.,;:!?)]|$)",
        re.IGNORECASE,
    ),
    # the cluster thing (Kubernetes) / the cluster thing (i.e. Kubernetes)
    re.compile(
        rf"(?P<alias>\bthe [\w -]{{2,40}}?)\s*\((?:i\.e\.?\s*|aka\s*|=\s*)?{_NAME}\)",
        re.IGNORECASE,
    ),
]


def names_of(beliefs: Iterable[Belief]) -> dict[str, set[str]]:
    """Normalised canonical names and aliases -> ids of the beliefs that answer to them."""
    out: dict[str, set[str]] = {}
    for b in beliefs:
        for name in (b.canonical_name, *b.aliases):
            token = normalize_name(name)
            if token:
                out.setdefault(token, set()).add(b.id)
    return out


def clean_alias(raw: str) -> str | None:
    """The alias as the user wrote it (quotes and edge punctuation off), or None if unfit."""
    alias = " ".join(raw.strip(_Q + " .,;:!?-").split())
    words = alias.lower().split()
    if not alias or len(alias) > MAX_ALIAS_CHARS or len(words) > MAX_ALIAS_WORDS:
        return None
    if not any(w not in STOP_WORDS and w not in _VAGUE and len(w) > 1 for w in words):
        return None
    return alias


def usable(alias: str, taken: Mapping[str, set[str]]) -> bool:
    """Not yet a name of any live belief of the user (this one included)."""
    return not taken.get(normalize_name(alias))


def _match_name(text: str, names: Mapping[str, set[str]], *, from_end: bool) -> str | None:
    words = text.strip(" .,;:!?").split()
    spans = (
        [words[len(words) - n :] for n in range(len(words), 0, -1)]
        if from_end
        else [words[:n] for n in range(len(words), 0, -1)]
    )
    for span in spans:
        ids = names.get(normalize_name(" ".join(span).strip(" .,;:!?")))
        if ids is not None:
            return next(iter(ids)) if len(ids) == 1 else None
    return None


def re_explained(
    messages: Sequence[str],
    beliefs: Sequence[Belief],
    taken: Mapping[str, set[str]],
) -> list[AliasAddition]:
    """Aliases from messages where the user explains a name by one of a belief's names."""
    names = names_of(beliefs)
    found: dict[str, list[tuple[str, str]]] = {}
    for text in messages:
        for pattern in _RE_EXPLAINED:
            for m in pattern.finditer(text):
                alias = clean_alias(m.group("alias"))
                from_end = pattern is _RE_EXPLAINED[2]
                belief_id = _match_name(m.group("name"), names, from_end=from_end)
                if alias is None or belief_id is None:
                    continue
                if not usable(alias, taken):
                    continue
                found.setdefault(belief_id, [])
                if alias.lower() not in {a.lower() for a, _ in found[belief_id]}:
                    found[belief_id].append((alias, m.group(0).strip()))
    return [
        AliasAddition(
            belief_id=bid,
            aliases=tuple(a for a, _ in pairs),
            origin="re-explained",
            evidence=" | ".join(e for _, e in pairs)[:300],
        )
        for bid, pairs in found.items()
    ]


def said_by_user(alias: str, messages: Sequence[str]) -> bool:
    pattern = re.compile(rf"(?<!\w){re.escape(alias)}(?!\w)", re.IGNORECASE)
    return any(pattern.search(text) for text in messages)
