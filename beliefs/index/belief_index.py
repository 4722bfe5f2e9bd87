"""In-memory mirror of the store's beliefs with the alias search index.

The store calls `upsert`/`remove` after every committed write, so search never rebuilds and never
touches DuckDB. Each user's postings are `beliefs.index.user_postings`; each belief in them is an
`IndexedDoc` (`beliefs.index.indexed_doc`).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from beliefs.index.indexed_doc import index_doc
from beliefs.index.user_postings import CHANGES, UserPostings
from beliefs.model.models import Belief
from beliefs.model.record import BeliefRecord
from beliefs.text.query import normalize_name

if TYPE_CHECKING:
    from beliefs.index.semantic import SemanticIndex

log = logging.getLogger("tenure.beliefs")


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
        # belief -> its user, for every user's beliefs but the first user's: a store of one
        # user (and a bounded index's first) needs no entry for each belief (`_owner_of`)
        self._owner: dict[str, str] = {}
        self._first: str | None = None
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
            user = self._new_user(belief.user_id)
        user.deletes.stage()
        user.add(index_doc(belief))
        self._owns(belief.user_id, belief.id)

    def packed(self) -> None:
        """The fill is over: the fuzzy keys staged meanwhile are packed (lock held)."""
        for user in self._users.values():
            user.deletes.pack()

    def hold(self, user_id: str) -> None:
        """Hold the user (with no beliefs yet) while the index fills: a bounded index loads
        its hottest users so, and a user with no beliefs is held as such."""
        if user_id not in self._users:
            self._new_user(user_id)

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
                user = self._new_user(belief.user_id)
            user.add(index_doc(belief))
            self._owns(belief.user_id, belief.id)

    def remove(self, belief_id: str) -> None:
        with self.lock:
            self.version += 1
            self.derived.clear()
            owner = self._owner.pop(belief_id, None) or self._first_owning(belief_id)
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
            owner = self._owner_of(belief_id)
            if owner is None:
                if not self.bounded:
                    return None
                assert self.source is not None
                owner = self.source.owner_of(belief_id)
                if owner is None or owner in self._users:
                    return None
                self._read(owner)
                if self._owner_of(belief_id) is None:
                    return None
            return self._users[owner].docs[belief_id].belief

    def _new_user(self, user_id: str) -> UserPostings:
        """Hold a user with no beliefs yet (lock held)."""
        user = self._users[user_id] = UserPostings()
        if self._first is None:
            self._first = user_id
        return user

    def _owns(self, user_id: str, belief_id: str) -> None:
        """Note that the held user `user_id` holds `belief_id` (lock held)."""
        if user_id != self._first:
            self._owner[belief_id] = user_id

    def _first_owning(self, belief_id: str) -> str | None:
        first = self._first
        return first if first is not None and belief_id in self._users[first].docs else None

    def _owner_of(self, belief_id: str) -> str | None:
        """The held user holding `belief_id`, if any."""
        return self._owner.get(belief_id) or self._first_owning(belief_id)

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

    def scope_lists(self, user_id: str) -> Collection[tuple[str, ...]]:
        """Each scope list the user's beliefs hold, once (hold `lock` while reading them)."""
        return self.user(user_id).scopes.keys()

    def forget_derived(self) -> None:
        """Drop every view worked out from the index (what they depend on changed: rules,
        semantic recall)."""
        with self.lock:
            self.version += 1
            self.derived.clear()
            for user in self._users.values():
                user.derived.clear()
                user.standing.clear()
                user.version = next(CHANGES)

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
        postings = self._new_user(user_id)
        postings.deletes.stage()
        for belief in beliefs:
            postings.add(index_doc(belief))
            self._owns(user_id, belief.id)
        postings.deletes.pack()
        for change in changes:
            if isinstance(change, str):
                self.remove(change)
            else:
                self.upsert(change)
        self.loads += 1
        self.version += 1
        self.derived.clear()
        held = len(self)
        while held > self.bound and len(self._users) > 1:
            gone_id, gone = next(iter(self._users.items()))
            if gone_id == user_id:
                self._users.move_to_end(user_id)
                continue
            del self._users[gone_id]
            if gone_id == self._first:
                self._first = None
            else:
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
        first = self._first
        return len(self._owner) + (len(self._users[first].docs) if first is not None else 0)
