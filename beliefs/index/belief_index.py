"""In-memory mirror of the store's beliefs with the alias search index.

The store calls `upsert`/`remove` after every committed write, so search never rebuilds and never
touches DuckDB. Canonical names and aliases (rejected alternatives included) are each indexed as
one whole token; alias tokens also get their one-deletion variants so fuzzy lookups are
dictionary probes, not scans.
"""

from __future__ import annotations

import itertools
import logging
import sys
import threading
from bisect import bisect_left, insort
from collections import OrderedDict
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from beliefs.index.fuzzy_keys import FuzzyKeys
from beliefs.index.postings import SMALL_POSTING, Members, join, members, put, take
from beliefs.model.models import Belief
from beliefs.model.record import BeliefRecord
from beliefs.text.lexicon import stem, stem_phrase
from beliefs.text.query import STOP_WORDS, normalize_name

if TYPE_CHECKING:
    from beliefs.index.semantic import SemanticIndex

FUZZY_PREFIX = 2
log = logging.getLogger("tenure.beliefs")


def deletion_variants(term: str) -> set[str]:
    """`term` with one character removed, never touching the guarded prefix."""
    return {term[:i] + term[i + 1 :] for i in range(FUZZY_PREFIX, len(term))}


@dataclass(slots=True)
class IndexedDoc:
    belief: BeliefRecord
    canonical: str
    aliases: tuple[str, ...]  # its alias tokens, then its rejected alternatives' tokens
    alias_count: int = 0  # how many of `aliases` are aliases (the rest are rejected ones)
    domain: frozenset[str] | None = None  # stems of its own words, worked out when first asked
    proper: frozenset[str] | None = None  # words it writes as names, worked out when first asked
    # Its ranking bonus under the rules `weighed_by` (see `search.weigh`): worked out the first
    # time those rules weigh it, then read; a new belief version is a new doc, new rules a new
    # `weighed_by`, so neither needs clearing.
    weighed_by: object = None
    weight: float = 1.0

    @property
    def recency(self) -> float:
        """Minus the last reinforcement's timestamp: ties rank newest first (worked out when
        asked, for the few ranked beliefs, rather than held as a float by every belief)."""
        belief = self.belief
        return -(belief.last_reinforced_at or belief.updated_at).timestamp()


# An alias's posting: its one belief, its few beliefs in a tuple, or more by their alias count
# (BM25's length norm is one number per count, so a group scores at one rate): a dict costs
# over 200 bytes, and most aliases belong to a few beliefs.
AliasPosting = str | tuple[str, ...] | dict[int, Members]
StemKind = Literal["canonical", "alias"]
PinnedKey = tuple[int, int, float, str]  # see `pinned_order`
MAX_CACHED_STEMS = 50_000
# A name word is looked up only while it is in at most MAX_NAME_WORD_NAMES canonical names (the
# kind of that many things names none of them: `beliefs.search.kind_words`). Past NAME_WORD_HELD
# only its count is held, and its names are found again if it falls back to MAX_NAME_WORD_NAMES.
MAX_NAME_WORD_NAMES = 8
NAME_WORD_HELD = 64
_CHANGES = itertools.count(1)  # each change of any user's postings takes the next number


def name_words(canonical: str) -> list[str]:
    """Stems of the words of a multi-word canonical name that may match alone.

    A number is never one ("16" of `postgres_16`): a turn's words hold no numbers
    (`beliefs.text.query`), so a number here could never be looked up, only cost memory.
    """
    words = canonical.split(" ")
    if len(words) < 2:
        return []
    return list(
        dict.fromkeys(
            stem(w)
            for w in words
            if len(w) > FUZZY_PREFIX and w not in STOP_WORDS and not w.isdigit()
        )
    )


@dataclass
class UserPostings:
    """Postings of one user's beliefs: BM25 statistics are per user.

    A posting holds a lone member as itself (`Members`); read one through `members`, and an
    alias's through `alias_ids`/`alias_groups`. Stems are held only where they differ from the
    token: `stem_matches` adds the token itself.
    """

    docs: dict[str, IndexedDoc] = field(default_factory=dict)
    canonical: dict[str, Members] = field(default_factory=dict)  # canonical token -> ids
    aliases: dict[str, AliasPosting] = field(default_factory=dict)  # alias token -> ids
    # one-word tokens by the hash of each deletion variant: a collision only adds a candidate
    # the caller verifies (packed: `beliefs.index.fuzzy_keys`)
    deletes: FuzzyKeys = field(default_factory=FuzzyKeys)
    ends: dict[tuple[int, str, str], Members] = field(default_factory=dict)  # phrase tokens
    sizes: dict[int, int] = field(default_factory=dict)  # alias tokens by word count
    alias_docs: int = 0
    alias_len_sum: int = 0
    name_sizes: dict[int, int] = field(default_factory=dict)  # canonical tokens by word count
    pinned: set[str] = field(default_factory=set)  # pinned or delivery=always
    # the same beliefs in the pinned layer's order, by `pinned_order`: kept sorted as beliefs
    # come and go, so a user's standing layers are a pass over them, not a sort
    pinned_order: list[PinnedKey] = field(default_factory=list)
    alias_stems: dict[str, Members] = field(default_factory=dict)  # stemmed -> alias tokens
    canonical_stems: dict[str, Members] = field(default_factory=dict)  # stemmed -> canonical
    # name word stem -> the canonical tokens holding it, or past NAME_WORD_HELD only how many
    name_words: dict[str, Members | int] = field(default_factory=dict)
    stem_cache: dict[tuple[StemKind, str], tuple[str, ...]] = field(default_factory=dict)
    # The number of this user's last change (no other change has it; 0: none yet), and the
    # views worked out from this user's beliefs since: another user's writes leave them be.
    version: int = 0
    derived: dict[object, object] = field(default_factory=dict)
    # views worked out from the pinned beliefs alone (the standing layers): they outlive
    # writes of the user's other beliefs
    standing: dict[object, object] = field(default_factory=dict)

    def add(self, doc: IndexedDoc) -> None:
        bid = doc.belief.id
        self.version = next(_CHANGES)
        if self.stem_cache:
            self.stem_cache.clear()
        if self.derived:
            self.derived.clear()
        pinned = doc.belief.pinned or doc.belief.delivery == "always"
        if pinned and self.standing:
            self.standing.clear()
        self.docs[bid] = doc
        if doc.canonical not in self.canonical:
            _count(self.name_sizes, doc.canonical, 1)
            _put_stem(self.canonical_stems, doc.canonical)
            for word in name_words(doc.canonical):
                self._put_name_word(word, doc.canonical)
        put(self.canonical, doc.canonical, bid)
        length = len(doc.aliases)
        for token in doc.aliases:
            posting = self.aliases.get(token)
            if posting is None:
                for key in _fuzzy_keys(token):
                    if isinstance(key, int):
                        self.deletes.put(key, token)
                    else:
                        put(self.ends, key, token)
                _count(self.sizes, token, 1)
                _put_stem(self.alias_stems, token)
                self.aliases[token] = bid
            elif isinstance(posting, str):
                if posting != bid:
                    self.aliases[token] = (posting, bid)
            elif isinstance(posting, tuple):
                if bid not in posting:
                    if len(posting) < SMALL_POSTING:
                        self.aliases[token] = (*posting, bid)
                    else:
                        self.aliases[token] = self._grouped((*posting, bid))
            else:
                join(posting, length, bid)
        if doc.aliases:
            self.alias_docs += 1
            self.alias_len_sum += len(doc.aliases)
        if pinned:
            self.pinned.add(bid)
            insort(self.pinned_order, pinned_order(doc))

    def discard(self, bid: str) -> None:
        doc = self.docs.pop(bid, None)
        if doc is None:
            return
        self.version = next(_CHANGES)
        self.stem_cache.clear()
        self.derived.clear()
        take(self.canonical, doc.canonical, bid)
        if doc.canonical not in self.canonical:
            _count(self.name_sizes, doc.canonical, -1)
            _take_stem(self.canonical_stems, doc.canonical)
            for word in name_words(doc.canonical):
                self._take_name_word(word, doc.canonical)
        length = len(doc.aliases)
        for token in doc.aliases:
            posting = self.aliases.get(token)
            if posting is None:
                continue
            if isinstance(posting, dict):
                take(posting, length, bid)
                if self.alias_df(token) <= SMALL_POSTING:
                    self.aliases[token] = tuple(self.alias_ids(token))
            elif isinstance(posting, tuple):
                left = tuple(b for b in posting if b != bid)
                self.aliases[token] = left if len(left) > 1 else left[0]
            elif posting == bid:
                del self.aliases[token]
            if token not in self.aliases:
                _count(self.sizes, token, -1)
                _take_stem(self.alias_stems, token)
                for key in _fuzzy_keys(token):
                    if isinstance(key, int):
                        self.deletes.take(key, token)
                    else:
                        take(self.ends, key, token)
        if doc.aliases:
            self.alias_docs -= 1
            self.alias_len_sum -= len(doc.aliases)
        if bid in self.pinned:
            self.standing.clear()
            self.pinned.discard(bid)
            place = pinned_order(doc)
            at = bisect_left(self.pinned_order, place)
            if at < len(self.pinned_order) and self.pinned_order[at] == place:
                del self.pinned_order[at]

    def _put_name_word(self, word: str, canonical: str) -> None:
        held = self.name_words.get(word)
        if isinstance(held, int):
            self.name_words[word] = held + 1
        elif held is not None and len(members(held)) >= NAME_WORD_HELD:
            self.name_words[word] = NAME_WORD_HELD + 1
        else:
            put(self.name_words, word, canonical)  # type: ignore[arg-type]

    def _take_name_word(self, word: str, canonical: str) -> None:
        held = self.name_words.get(word)
        if not isinstance(held, int):
            take(self.name_words, word, canonical)  # type: ignore[arg-type]
        elif held - 1 > MAX_NAME_WORD_NAMES:
            self.name_words[word] = held - 1
        else:  # few enough to be looked up again: its names, from the names held
            del self.name_words[word]
            for token in self.canonical:
                if token != canonical and word in name_words(token):
                    put(self.name_words, word, token)  # type: ignore[arg-type]

    @property
    def avg_alias_len(self) -> float:
        return self.alias_len_sum / self.alias_docs if self.alias_docs else 1.0

    def _grouped(self, ids: Iterable[str]) -> dict[int, Members]:
        """A large alias posting: its beliefs by their alias count."""
        groups: dict[int, Members] = {}
        for bid in ids:
            join(groups, len(self.docs[bid].aliases), bid)
        return groups

    def canonical_ids(self, token: str) -> Collection[str]:
        """The beliefs whose canonical name is `token`."""
        return members(self.canonical.get(token))

    def alias_ids(self, token: str) -> Collection[str]:
        """The beliefs holding the alias (or rejected alternative) `token`."""
        posting = self.aliases.get(token)
        if not isinstance(posting, dict):
            return members(posting)
        if len(posting) == 1:
            return members(next(iter(posting.values())))
        return [bid for ids in posting.values() for bid in members(ids)]

    def alias_df(self, token: str) -> int:
        """How many beliefs hold the alias `token`."""
        posting = self.aliases.get(token)
        if not isinstance(posting, dict):
            return len(members(posting))
        return sum(1 if isinstance(ids, str) else len(ids) for ids in posting.values())

    def alias_groups(self, token: str) -> Iterator[tuple[int, Collection[str]]]:
        """The beliefs holding the alias `token`, grouped by how many aliases each has (the
        BM25 length norm is the same within a group)."""
        posting = self.aliases.get(token)
        if posting is None:
            return
        if isinstance(posting, str):
            yield len(self.docs[posting].aliases), (posting,)
            return
        groups = self._grouped(posting) if isinstance(posting, tuple) else posting
        for length, ids in groups.items():  # a few beliefs (a tuple) are grouped when read
            yield length, members(ids)

    def stem_matches(self, kind: StemKind, query: str) -> tuple[str, ...]:
        """Canonical or alias tokens whose stem is the stem of `query` (kept per query term
        until the postings change: turns repeat their words and phrases)."""
        key = (kind, query)
        found = self.stem_cache.get(key)
        if found is None:
            stems, exact = (
                (self.canonical_stems, self.canonical)
                if kind == "canonical"
                else (self.alias_stems, self.aliases)
            )
            stemmed = stem_phrase(query)
            found = tuple(members(stems.get(stemmed)))
            if stemmed in exact and stem_phrase(stemmed) == stemmed:
                found += (stemmed,)
            if len(self.stem_cache) >= MAX_CACHED_STEMS:
                self.stem_cache.clear()
            self.stem_cache[key] = found
        return found

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
            for token in (*members(self.ends.get(first)), *members(self.ends.get(last))):
                if token not in seen:
                    seen.add(token)
                    yield token
            return
        probes = deletion_variants(term)
        for variant in (term, *probes):
            for token in members(self.deletes.get(hash(variant))):
                if token not in seen:
                    seen.add(token)
                    yield token
        for variant in probes:
            if variant not in seen and variant in self.aliases:
                seen.add(variant)
                yield variant


def _put_stem(stems: dict[str, Members], token: str) -> None:
    stemmed = stem_phrase(token)
    if stemmed != token:
        put(stems, stemmed, token)


def _take_stem(stems: dict[str, Members], token: str) -> None:
    stemmed = stem_phrase(token)
    if stemmed != token:
        take(stems, stemmed, token)


def _fuzzy_keys(token: str) -> list[int | tuple[int, str, str]]:
    words = token.split(" ")
    if len(words) > 1:
        return [(len(words), "first", words[0]), (len(words), "last", words[-1])]
    return [hash(variant) for variant in deletion_variants(token)]


def _count(sizes: dict[int, int], token: str, change: int) -> None:
    """Keep `sizes` (distinct tokens by word count) in step; counts that reach 0 go."""
    words = token.count(" ") + 1
    left = sizes.get(words, 0) + change
    if left:
        sizes[words] = left
    else:
        sizes.pop(words, None)


def pinned_order(doc: IndexedDoc) -> PinnedKey:
    """Where a pinned belief stands in the pinned layer: edited by the user first, then by
    trust, then the most recently reinforced (then by id, so the order is total)."""
    belief = doc.belief
    return (-int(belief.user_edited), -belief.trust, doc.recency, belief.id)


def index_doc(belief: BeliefRecord) -> IndexedDoc:
    # tokens interned: beliefs sharing an alias share its token, and a loaded belief's alias
    # strings are interned too, so a token written as it is indexed is that string
    tokens: dict[str, None] = {}
    for name in belief.aliases:
        token = normalize_name(name)
        if token:
            tokens.setdefault(sys.intern(token))
    alias_count = len(tokens)
    for name in belief.rejected_alternatives:
        token = normalize_name(name)
        if token:
            tokens.setdefault(sys.intern(token))
    aliases = tuple(tokens)
    if aliases == belief.aliases:  # written as indexed, nothing rejected: one tuple serves
        aliases = belief.aliases
    return IndexedDoc(
        belief=belief,
        canonical=normalize_name(belief.canonical_name),
        aliases=aliases,
        alias_count=alias_count,
    )


class UserSource(Protocol):
    """Where a bounded index reads the users it does not hold (the store's database)."""

    def owner_of(self, belief_id: str) -> str | None:
        """The user whose live belief `belief_id` is, if any."""

    def live_beliefs(self, user_ids: Sequence[str]) -> dict[str, list[BeliefRecord]]:
        """Every live belief of each user, as stored now."""


class BeliefIndex:
    """Every non-deleted belief, by user, with search postings; safe to read from any thread.

    Bounded (`bound`, with a `source`), it holds at most about that many beliefs: a user is
    read in whole from the source when first asked for (`user`, `get`, ...) or, without
    waiting, by `load_soon`; the users asked for least recently leave when a load passes the
    bound. Changes to a user it does not hold are not kept (the source has them).
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._users: OrderedDict[str, UserPostings] = OrderedDict()  # least recent first
        self._owner: dict[str, str] = {}
        self.version = 0  # bumped on every change
        self.derived: dict[object, object] = {}  # views computed from the index; reset on change
        self.semantic: SemanticIndex | None = None  # embedding recall, when switched on
        self.reference_only = False  # match as the reference does (for measuring against it)
        self.relevance_model = False  # keep hits by the relevance model, not the rules
        self.ready = threading.Event()  # clear while the store's rows load in the background
        self.ready.set()
        self.failed: str | None = None  # why a background load stopped, if it did
        self.source: UserSource | None = None
        self.bound = 0  # most beliefs held when `source` is set (0: all, no source needed)
        self.loads = 0  # users read from the source on demand
        self.evictions = 0  # users let go to stay within the bound
        self._loading: dict[str, list[BeliefRecord | str]] = {}  # user -> changes while reading
        self._soon: set[str] = set()  # users asked for by `load_soon`, not read yet
        self._loader: threading.Thread | None = None

    @property
    def bounded(self) -> bool:
        return self.source is not None and self.bound > 0

    def load(self, beliefs: Iterable[Belief | BeliefRecord]) -> None:
        with self.lock:
            for belief in beliefs:
                self.upsert(belief)

    def add_loaded(self, belief: BeliefRecord) -> None:
        """Index a live row while the index fills (every id is new: nothing to replace);
        `packed` ends the fill."""
        user = self._users.get(belief.user_id)
        if user is None:
            user = self._users[belief.user_id] = UserPostings()
        user.deletes.stage()
        user.add(index_doc(belief))
        self._owner[belief.id] = belief.user_id

    def packed(self) -> None:
        """The fill is over: the fuzzy keys staged meanwhile are packed (lock held)."""
        for user in self._users.values():
            user.deletes.pack()

    def hold(self, user_id: str) -> None:
        """Hold the user (with no beliefs yet) while the index fills: a bounded index loads
        its hottest users so, and a user with no beliefs is held as such."""
        if user_id not in self._users:
            self._users[user_id] = UserPostings()

    def upsert(self, written: Belief | BeliefRecord) -> None:
        """Index the belief's current state, as stored (a deleted row is removed)."""
        belief = written if isinstance(written, BeliefRecord) else BeliefRecord.of(written)
        with self.lock:
            self.remove(belief.id)
            if belief.deleted_at is not None:
                return
            user = self._users.get(belief.user_id)
            if user is None:
                if self.bounded:  # not held: read in whole when asked for
                    if belief.user_id in self._loading:
                        self._loading[belief.user_id].append(belief)
                    return
                user = self._users[belief.user_id] = UserPostings()
            user.add(index_doc(belief))
            self._owner[belief.id] = belief.user_id

    def remove(self, belief_id: str) -> None:
        with self.lock:
            self.version += 1
            self.derived.clear()
            owner = self._owner.pop(belief_id, None)
            if owner is not None:
                self._users[owner].discard(belief_id)
            for changes in self._loading.values():
                changes.append(belief_id)

    def get(self, belief_id: str) -> Belief | None:
        """The belief `belief_id` as a full model (a new one each call), if live."""
        found = self.record(belief_id)
        return None if found is None else found.to_belief()

    def record(self, belief_id: str) -> BeliefRecord | None:
        """The belief `belief_id` as the index holds it, if live."""
        with self.lock:
            owner = self._owner.get(belief_id)
            if owner is None:
                if not self.bounded:
                    return None
                assert self.source is not None
                owner = self.source.owner_of(belief_id)
                if owner is None or owner in self._users:
                    return None
                self._read(owner)
                if belief_id not in self._owner:
                    return None
            return self._users[owner].docs[belief_id].belief

    def belief_of(self, user_id: str, belief_id: str) -> BeliefRecord | None:
        """The user's belief `belief_id`, if it is the user's (no other user is read)."""
        with self.lock:
            doc = self.user(user_id).docs.get(belief_id)
            return None if doc is None else doc.belief

    def user_version(self, user_id: str) -> int:
        """The number of the user's last change: views of the user's beliefs worked out at
        it hold while it stays (0 for a user not held or never changed)."""
        found = self._users.get(user_id)
        return 0 if found is None else found.version

    def derived_of(self, user_id: str) -> dict[object, object]:
        """Views worked out from the user's beliefs, emptied whenever they change (a scratch
        dict for a user not held; hold `lock`)."""
        found = self._users.get(user_id)
        return {} if found is None else found.derived

    def forget_derived(self) -> None:
        """Drop every view worked out from the index (what they depend on changed: rules,
        semantic recall)."""
        with self.lock:
            self.version += 1
            self.derived.clear()
            for user in self._users.values():
                user.derived.clear()
                user.standing.clear()
                user.version = next(_CHANGES)

    @property
    def users_held(self) -> int:
        return len(self._users)

    def held(self, user_id: str) -> bool:
        """Whether the user's beliefs are in memory (always, unbounded)."""
        return not self.bounded or user_id in self._users

    def user(self, user_id: str) -> UserPostings:
        """The user's postings (empty if unknown); hold `lock` while reading them. A bounded
        index reads a user it does not hold first."""
        found = self._users.get(user_id)
        if found is not None:
            if self.bounded:
                self._users.move_to_end(user_id)
            return found
        if not self.bounded:
            return UserPostings()
        with self.lock:
            return self._read(user_id)

    def load_soon(self, user_id: str) -> None:
        """Read the user on the index's loader thread, unless held or already asked for.
        The loader reads every user asked for meanwhile in one statement (one pass over the
        store however many users wait)."""
        with self.lock:
            if user_id in self._users or user_id in self._soon:
                return
            self._soon.add(user_id)
            if self._loader is None or not self._loader.is_alive():
                self._loader = threading.Thread(
                    target=self._load_asked, name="tenure-user-load", daemon=True
                )
                self._loader.start()

    def _load_asked(self) -> None:
        assert self.source is not None
        while True:
            with self.lock:
                users = sorted(u for u in self._soon if u not in self._users)
                if not users:
                    self._soon.clear()
                    self._loader = None
                    return
                for user_id in users:
                    self._loading[user_id] = []
            try:  # read without the lock, so turns of users held go on meanwhile
                read = self.source.live_beliefs(users)
            except Exception:
                log.exception("reading the beliefs of %d user(s) failed", len(users))
                read = None
            with self.lock:
                for user_id in users:
                    changes = self._loading.pop(user_id, [])
                    self._soon.discard(user_id)
                    if read is not None and user_id not in self._users:  # else read meanwhile
                        self._install(user_id, read.get(user_id, []), changes)
                if read is None:  # asked again later, not in a loop now
                    return

    def _read(self, user_id: str) -> UserPostings:
        """Read the user from the source now (lock held)."""
        assert self.source is not None
        self._loading.setdefault(user_id, [])
        try:
            beliefs = self.source.live_beliefs([user_id]).get(user_id, [])
        finally:
            changes = self._loading.pop(user_id, [])
        return self._install(user_id, beliefs, changes)

    def _install(
        self, user_id: str, beliefs: list[BeliefRecord], changes: list[BeliefRecord | str]
    ) -> UserPostings:
        """Hold the user's beliefs as read, then the changes written while they were read
        (the read may predate them); then let the least recent users go while the index holds
        more than its bound (lock held)."""
        postings = UserPostings()
        postings.deletes.stage()
        for belief in beliefs:
            postings.add(index_doc(belief))
            self._owner[belief.id] = user_id
        postings.deletes.pack()
        self._users[user_id] = postings
        for change in changes:
            if isinstance(change, str):
                self.remove(change)
            else:
                self.upsert(change)
        self.loads += 1
        self.version += 1
        self.derived.clear()
        held = len(self._owner)
        while held > self.bound and len(self._users) > 1:
            gone_id, gone = next(iter(self._users.items()))
            if gone_id == user_id:
                self._users.move_to_end(user_id)
                continue
            del self._users[gone_id]
            for bid in gone.docs:
                del self._owner[bid]
            held -= len(gone.docs)
            self.evictions += 1
        return postings

    def records(self, user_id: str) -> list[BeliefRecord]:
        """Every live belief of the user, as the index holds them (read them, do not keep
        them: a change replaces a record rather than changing it)."""
        with self.lock:
            return [doc.belief for doc in self.user(user_id).docs.values()]

    def beliefs(self, user_id: str) -> list[Belief]:
        """Every live belief of the user as full models (built on each call)."""
        return [record.to_belief() for record in self.records(user_id)]

    def by_name(self, user_id: str, name: str) -> list[Belief]:
        with self.lock:
            postings = self.user(user_id)
            ids = postings.canonical_ids(normalize_name(name))
            return [postings.docs[i].belief.to_belief() for i in ids]

    def __len__(self) -> int:
        return len(self._owner)
