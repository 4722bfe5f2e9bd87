"""Syncing one file's passages into the store: what to keep, add, supersede and remove.

`plan` is pure: it compares the passages cut now with the live passages stored for the same
source. A passage whose text and place are unchanged has the same id and is left alone; one
whose text changed at the same place supersedes its old version (a chain, as for any belief);
one whose place is gone is soft-deleted. `apply` writes a plan in one transaction, so an
interrupted ingest loses at most the file it was writing, and running it again resumes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from beliefs.documents.cutting import Passage
from beliefs.model.errors import BeliefNotFound
from beliefs.model.models import Belief
from beliefs.model.record import AnyBelief
from beliefs.text.query import written_words

if TYPE_CHECKING:
    from beliefs.store.belief_store import BeliefStore

PASSAGE = "passage"  # `provenance["kind"]` of every stored passage
ACTOR = "ingest"
MAX_ALIAS_WORDS = 4
_NAME_CHARS = re.compile(r"[A-Za-z][\w.+#-]*[\w+#]")


@dataclass(frozen=True)
class Where:
    """The source a file's passages belong to, and the ingest writing them."""

    user_id: str
    scope: str
    source_id: str
    path: str
    epoch: str
    at: datetime


@dataclass
class FilePlan:
    keep: list[str] = field(default_factory=list)
    create: list[Belief] = field(default_factory=list)
    supersede: list[tuple[str, Belief]] = field(default_factory=list)
    remove: list[str] = field(default_factory=list)

    @property
    def changes(self) -> int:
        return len(self.create) + len(self.supersede) + len(self.remove)


def passage_id(source_id: str, passage: Passage, salt: int = 0) -> str:
    text = f"{source_id}\x00{passage.key}\x00{passage.content_hash}\x00{salt}"
    return "b-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def is_passage(belief: AnyBelief) -> bool:
    return belief.provenance.get("kind") == PASSAGE


def aliases_of(path: str, passage: Passage) -> list[str]:
    """Names to find the passage by, worked out from its headings, file name and the words
    its text writes as names ("PgBouncer", "k8s"): the same text always gives the same ones."""
    out: list[str] = []
    for title in passage.heading:
        words = title.lower().split()
        if 0 < len(words) <= MAX_ALIAS_WORDS:
            out.append(" ".join(words))
    stem = PurePosixPath(path).stem.replace("_", " ").replace("-", " ").lower()
    if stem.strip():
        out.append(stem.strip())
    for word, named in written_words(passage.text):
        if named and len(word) > 1 and _NAME_CHARS.fullmatch(word):
            out.append(word)
    return list(dict.fromkeys(out))[:25]


def passage_belief(where: Where, passage: Passage, belief_id: str) -> Belief:
    provenance: dict[str, Any] = {
        "kind": PASSAGE,
        "source": where.source_id,
        "file": where.path,
        "heading": list(passage.heading),
        "lines": [passage.first_line, passage.last_line],
        "hash": passage.content_hash,
        "key": passage.key,
        "aliases": aliases_of(where.path, passage),
        "ingested_at": where.at.isoformat(),
        "epoch": where.epoch,
    }
    return Belief(
        id=belief_id,
        user_id=where.user_id,
        type="entity",
        canonical_name=f"passage_{belief_id[2:]}",
        content=passage.text,
        scope=[where.scope],
        confidence=1.0,
        memory_class="document",
        source_type="import",
        created_at=where.at,
        updated_at=where.at,
        provenance=provenance,
    )


def plan(where: Where, passages: Sequence[Passage], stored: Sequence[AnyBelief]) -> FilePlan:
    """What writing `passages` over the `stored` live passages of the source changes."""
    live = {b.id: b for b in stored if b.is_live}
    by_key = {str(b.provenance.get("key")): b.id for b in live.values()}
    out = FilePlan()
    matched: set[str] = set()
    for passage in passages:
        pid = passage_id(where.source_id, passage)
        if pid in live:
            out.keep.append(pid)
            matched.add(pid)
            continue
        new = passage_belief(where, passage, pid)
        old = by_key.get(passage.key)
        if old is not None and old not in matched and live[old].content != passage.text:
            matched.add(old)
            out.supersede.append((old, new))
        else:
            out.create.append(new)
    out.remove = [bid for bid in live if bid not in matched]
    return out


def apply(store: BeliefStore, plan: FilePlan) -> None:
    """Write the plan (inside the caller's transaction). A passage id that is taken by an
    older row (an edit undone: A, then B, then A again) gets a fresh one."""
    for bid in plan.remove:
        store.soft_delete(bid, actor=ACTOR, with_history=False)
    for old_id, new in plan.supersede:
        store.supersede(
            old_id,
            _free(store, new),
            reason="changed on re-ingest",
            actor=ACTOR,
            with_history=False,
        )
    for new in plan.create:
        existing = _stored(store, new.id)
        if (
            existing is not None
            and existing.deleted_at is not None
            and existing.superseded_by is None
        ):  # removed earlier, back now: the same row
            store.restore(new.id, actor=ACTOR, with_history=False)
            store.update(new.id, {"provenance": new.provenance}, actor=ACTOR, with_history=False)
            continue
        store.create(_free(store, new), actor=ACTOR, with_history=False)


def _free(store: BeliefStore, belief: Belief) -> Belief:
    salt = 0
    candidate = belief
    while _stored(store, candidate.id) is not None:
        salt += 1
        digest = hashlib.sha256(f"{belief.id}\x00{salt}".encode()).hexdigest()[:16]
        candidate = belief.model_copy(
            update={"id": f"b-{digest}", "canonical_name": f"passage_{digest}"}
        )
    return candidate


def _stored(store: BeliefStore, belief_id: str) -> Belief | None:
    try:
        return store.get(belief_id, with_history=False)
    except BeliefNotFound:
        return None
