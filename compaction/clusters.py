"""Which beliefs compaction looks at together: a scope's live beliefs linked by shared names.

Union-find over tokens: each whole canonical name and alias (as the search index reads it), the
words of the canonical name, and the content itself (so exact duplicates under different names
meet). A token shared by many beliefs says little ("code", "style") and links nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from beliefs.context.citations import is_passage
from beliefs.model.models import Belief, same_content
from beliefs.text.query import STOP_WORDS, normalize_name

MAX_TOKEN_SHARE = 6
MAX_CLUSTER = 12
MIN_WORD = 3


def scope_key(belief: Belief) -> str:
    """Beliefs are compared only with beliefs of exactly the same scopes."""
    return ",".join(sorted(belief.scope))


def examinable(belief: Belief, now: datetime) -> bool:
    """Live, deliverable beliefs: rejected, resolved and expired ones are left alone."""
    return (
        belief.is_live
        and belief.review_state != "rejected"
        and belief.resolved_at is None
        and (belief.expires_at is None or belief.expires_at > now)
        and not is_passage(belief)  # a document's passages change only by re-ingest
    )


def partitions(beliefs: Iterable[Belief]) -> dict[tuple[str, str], list[Belief]]:
    """(user, scope key) -> beliefs, oldest first."""
    out: dict[tuple[str, str], list[Belief]] = {}
    for belief in sorted(beliefs, key=lambda b: (b.created_at, b.id)):
        out.setdefault((belief.user_id, scope_key(belief)), []).append(belief)
    return out


def name_tokens(belief: Belief) -> set[str]:
    tokens = {normalize_name(n) for n in (belief.canonical_name, *belief.aliases)}
    words = normalize_name(belief.canonical_name).split()
    if len(words) > 1:
        tokens.update(f"word:{w}" for w in words if len(w) >= MIN_WORD and w not in STOP_WORDS)
    content = " ".join(belief.content.lower().split()).rstrip(".!;: ")
    if content:
        tokens.add(f"content:{content}")
    tokens.discard("")
    return tokens


def clusters(beliefs: Sequence[Belief]) -> list[list[Belief]]:
    """Groups of beliefs sharing a token (transitively), each oldest first, singletons too."""
    parent = list(range(len(beliefs)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    holders: dict[str, list[int]] = {}
    for i, belief in enumerate(beliefs):
        for token in name_tokens(belief):
            holders.setdefault(token, []).append(i)
    for members in holders.values():
        if 1 < len(members) <= MAX_TOKEN_SHARE:
            for other in members[1:]:
                parent[root(other)] = root(members[0])
    groups: dict[int, list[Belief]] = {}
    for i, belief in enumerate(beliefs):
        groups.setdefault(root(i), []).append(belief)
    return list(groups.values())


def chunks(beliefs: Sequence[Belief], size: int = MAX_CLUSTER) -> list[list[Belief]]:
    """A large cluster goes to the model in parts (duplicates are found over all of it)."""
    return [list(beliefs[i : i + size]) for i in range(0, len(beliefs), size)]


def duplicates(beliefs: Sequence[Belief]) -> list[list[Belief]]:
    """Groups of exact duplicates: same type and agent, and the same name or the same content."""
    parent = list(range(len(beliefs)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(beliefs):
        for j in range(i + 1, len(beliefs)):
            b = beliefs[j]
            if a.type != b.type or a.agent_id != b.agent_id:
                continue
            same_name = normalize_name(a.canonical_name) == normalize_name(b.canonical_name)
            if same_name or (a.content.strip() and same_content(a.content, b.content)):
                parent[root(j)] = root(i)
    groups: dict[int, list[Belief]] = {}
    for i, belief in enumerate(beliefs):
        groups.setdefault(root(i), []).append(belief)
    return [g for g in groups.values() if len(g) > 1]
