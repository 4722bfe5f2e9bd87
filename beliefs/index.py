"""In-memory mirror of the store's beliefs with the alias search index.

The store calls `upsert`/`remove` after every committed write, so search never rebuilds and never
touches DuckDB. Canonical names and aliases (rejected alternatives included) are each indexed as
one whole token; alias tokens also get their one-deletion variants so fuzzy lookups are
dictionary probes, not scans.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from beliefs.lexicon import stem, stem_phrase
from beliefs.models import Belief
from beliefs.query import STOP_WORDS, normalize_name

if TYPE_CHECKING:
    from beliefs.semantic import SemanticIndex

FUZZY_PREFIX = 2


def deletion_variants(term: str) -> set[str]:
    """`term` with one character removed, never touching the guarded prefix."""
    return {term[:i] + term[i + 1 :] for i in range(FUZZY_PREFIX, len(term))}


@dataclass
class IndexedDoc:
    belief: Belief
    canonical: str
    aliases: dict[str, str]  # token -> field ("alias" | "rejected_alternative")
    recency: float = 0.0  # minus the last reinforcement's timestamp: ties rank newest first
    domain: frozenset[str] | None = None  # stems of its own words, worked out when first asked
    proper: frozenset[str] | None = None  # words it writes as names, worked out when first asked


def name_words(canonical: str) -> list[str]:
    """Stems of the words of a multi-word canonical name that may match alone."""
    words = canonical.split(" ")
    if len(words) < 2:
        return []
    return list(
        dict.fromkeys(stem(w) for w in words if len(w) > FUZZY_PREFIX and w not in STOP_WORDS)
    )


@dataclass
class UserPostings:
    """Postings of one user's beliefs: BM25 statistics are per user."""

    docs: dict[str, IndexedDoc] = field(default_factory=dict)
    canonical: dict[str, set[str]] = field(default_factory=dict)  # canonical token -> ids
    aliases: dict[str, dict[str, int]] = field(default_factory=dict)  # token -> {id: length}
    deletes: dict[str, set[str]] = field(default_factory=dict)  # one-word tokens only
    ends: dict[tuple[int, str, str], set[str]] = field(default_factory=dict)  # phrase tokens
    sizes: dict[int, int] = field(default_factory=dict)  # alias tokens by word count
    alias_docs: int = 0
    alias_len_sum: int = 0
    name_sizes: dict[int, int] = field(default_factory=dict)  # canonical tokens by word count
    pinned: set[str] = field(default_factory=set)  # pinned or delivery=always
    alias_stems: dict[str, set[str]] = field(default_factory=dict)  # stemmed -> alias tokens
    canonical_stems: dict[str, set[str]] = field(default_factory=dict)  # stemmed -> canonical
    name_words: dict[str, set[str]] = field(default_factory=dict)  # name word stem -> canonical

    def add(self, doc: IndexedDoc) -> None:
        bid = doc.belief.id
        self.docs[bid] = doc
        if doc.canonical not in self.canonical:
            self.canonical[doc.canonical] = set()
            _count(self.name_sizes, doc.canonical, 1)
            self.canonical_stems.setdefault(stem_phrase(doc.canonical), set()).add(doc.canonical)
            for word in name_words(doc.canonical):
                self.name_words.setdefault(word, set()).add(doc.canonical)
        self.canonical[doc.canonical].add(bid)
        for token in doc.aliases:
            posting = self.aliases.get(token)
            if posting is None:
                posting = self.aliases[token] = {}
                for key in _fuzzy_keys(token):
                    self._fuzzy(key).add(token)
                _count(self.sizes, token, 1)
                self.alias_stems.setdefault(stem_phrase(token), set()).add(token)
            posting[bid] = len(doc.aliases)
        if doc.aliases:
            self.alias_docs += 1
            self.alias_len_sum += len(doc.aliases)
        if doc.belief.pinned or doc.belief.delivery == "always":
            self.pinned.add(bid)

    def discard(self, bid: str) -> None:
        doc = self.docs.pop(bid, None)
        if doc is None:
            return
        _discard(self.canonical, doc.canonical, bid)
        if doc.canonical not in self.canonical:
            _count(self.name_sizes, doc.canonical, -1)
            _discard(self.canonical_stems, stem_phrase(doc.canonical), doc.canonical)
            for word in name_words(doc.canonical):
                _discard(self.name_words, word, doc.canonical)
        for token in doc.aliases:
            posting = self.aliases.get(token)
            if posting is None:
                continue
            posting.pop(bid, None)
            if not posting:
                del self.aliases[token]
                _count(self.sizes, token, -1)
                _discard(self.alias_stems, stem_phrase(token), token)
                for key in _fuzzy_keys(token):
                    bucket = self._fuzzy(key)
                    bucket.discard(token)
                    if not bucket:
                        self._drop_fuzzy(key)
        if doc.aliases:
            self.alias_docs -= 1
            self.alias_len_sum -= len(doc.aliases)
        self.pinned.discard(bid)

    @property
    def avg_alias_len(self) -> float:
        return self.alias_len_sum / self.alias_docs if self.alias_docs else 1.0

    def _fuzzy(self, key: str | tuple[int, str, str]) -> set[str]:
        if isinstance(key, tuple):
            return self.ends.setdefault(key, set())
        return self.deletes.setdefault(key, set())

    def _drop_fuzzy(self, key: str | tuple[int, str, str]) -> None:
        if isinstance(key, tuple):
            self.ends.pop(key, None)
        else:
            self.deletes.pop(key, None)

    def alias_candidates(self, term: str, *, fuzzy: bool) -> Iterator[str]:
        """Alias tokens equal to `term` or, with `fuzzy`, possibly one edit away (verify!).

        One-word tokens are found through their deletion variants. A phrase one edit away
        keeps either its first or its last word intact, so phrases are found by those.
        """
        if term in self.aliases:
            yield term
        if not fuzzy or len(term) <= FUZZY_PREFIX:
            return
        seen = {term}
        words = term.split(" ")
        if len(words) > 1:
            first = (len(words), "first", words[0])
            last = (len(words), "last", words[-1])
            for token in (*self.ends.get(first, ()), *self.ends.get(last, ())):
                if token not in seen:
                    seen.add(token)
                    yield token
            return
        probes = deletion_variants(term)
        for variant in (term, *probes):
            for token in self.deletes.get(variant, ()):
                if token not in seen:
                    seen.add(token)
                    yield token
        for variant in probes:
            if variant not in seen and variant in self.aliases:
                seen.add(variant)
                yield variant


def _fuzzy_keys(token: str) -> list[str | tuple[int, str, str]]:
    words = token.split(" ")
    if len(words) > 1:
        return [(len(words), "first", words[0]), (len(words), "last", words[-1])]
    return list(deletion_variants(token))


def _count(sizes: dict[int, int], token: str, change: int) -> None:
    """Keep `sizes` (distinct tokens by word count) in step; counts that reach 0 go."""
    words = token.count(" ") + 1
    left = sizes.get(words, 0) + change
    if left:
        sizes[words] = left
    else:
        sizes.pop(words, None)


def _discard(mapping: dict[str, set[str]], key: str, value: str) -> None:
    bucket = mapping.get(key)
    if bucket is not None:
        bucket.discard(value)
        if not bucket:
            del mapping[key]


def index_doc(belief: Belief) -> IndexedDoc:
    aliases: dict[str, str] = {}
    for name in belief.aliases:
        token = normalize_name(name)
        if token:
            aliases.setdefault(token, "alias")
    for name in belief.rejected_alternatives:
        token = normalize_name(name)
        if token:
            aliases.setdefault(token, "rejected_alternative")
    reinforced = belief.last_reinforced_at or belief.updated_at
    return IndexedDoc(
        belief=belief,
        canonical=normalize_name(belief.canonical_name),
        aliases=aliases,
        recency=-reinforced.timestamp(),
    )


class BeliefIndex:
    """Every non-deleted belief, by user, with search postings; safe to read from any thread."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._users: dict[str, UserPostings] = {}
        self._owner: dict[str, str] = {}
        self.version = 0  # bumped on every change
        self.derived: dict[object, object] = {}  # views computed from the index; reset on change
        self.semantic: SemanticIndex | None = None  # embedding recall, when switched on
        self.reference_only = False  # match as the reference does (for measuring against it)
        self.ready = threading.Event()  # clear while the store's rows load in the background
        self.ready.set()
        self.failed: str | None = None  # why a background load stopped, if it did

    def load(self, beliefs: Iterable[Belief]) -> None:
        with self.lock:
            for belief in beliefs:
                self.upsert(belief)

    def add_loaded(self, belief: Belief) -> None:
        """Index a live row while the index fills (every id is new: nothing to replace)."""
        self._users.setdefault(belief.user_id, UserPostings()).add(index_doc(belief))
        self._owner[belief.id] = belief.user_id

    def upsert(self, belief: Belief) -> None:
        """Index the belief's current state (a deleted row is removed)."""
        with self.lock:
            self.remove(belief.id)
            if belief.deleted_at is not None:
                return
            user = self._users.setdefault(belief.user_id, UserPostings())
            user.add(index_doc(belief))
            self._owner[belief.id] = belief.user_id

    def remove(self, belief_id: str) -> None:
        with self.lock:
            self.version += 1
            self.derived.clear()
            owner = self._owner.pop(belief_id, None)
            if owner is not None:
                self._users[owner].discard(belief_id)

    def get(self, belief_id: str) -> Belief | None:
        with self.lock:
            owner = self._owner.get(belief_id)
            if owner is None:
                return None
            return self._users[owner].docs[belief_id].belief

    def user(self, user_id: str) -> UserPostings:
        """The user's postings (empty if unknown); hold `lock` while reading them."""
        return self._users.get(user_id) or UserPostings()

    def beliefs(self, user_id: str) -> list[Belief]:
        with self.lock:
            return [doc.belief for doc in self.user(user_id).docs.values()]

    def by_name(self, user_id: str, name: str) -> list[Belief]:
        with self.lock:
            postings = self.user(user_id)
            ids = postings.canonical.get(normalize_name(name), set())
            return [postings.docs[i].belief for i in ids]

    def __len__(self) -> int:
        return len(self._owner)
