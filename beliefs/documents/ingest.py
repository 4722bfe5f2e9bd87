"""Ingesting documents into a docs scope, and the lifecycle of their sources.

Each file is one source and one transaction: an interrupted ingest keeps every file it
finished, and running it again writes only what is still to do (an unchanged file, known by
its hash, writes nothing). A file that left a folder ingested before leaves retrieval with its
passages, as a deleted source does: both come back on undo until purged.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from beliefs.documents.cutting import FORMATS, cut
from beliefs.documents.sources import (
    Source,
    drop_source,
    find_source,
    get_source,
    list_sources,
    save_source,
    source_id,
)
from beliefs.documents.sync import ACTOR, FilePlan, Where, apply, is_passage, plan
from beliefs.model.errors import BeliefError, InvalidBelief
from beliefs.model.models import SCOPE_PATTERN, utcnow
from beliefs.model.record import AnyBelief
from beliefs.model.rules import SOURCE_LABEL

if TYPE_CHECKING:
    from beliefs.store.belief_store import BeliefStore

DELETE_GRACE = timedelta(days=7)
Status = Literal["new", "changed", "unchanged", "removed", "failed"]


class DocumentError(BeliefError):
    """A document that cannot be read (its format, its encoding)."""


@dataclass(frozen=True)
class DocumentFile:
    """One file to ingest: its path as cited, its text and its format."""

    path: str
    text: str
    format: str
    size: int


@dataclass
class FileReport:
    path: str
    status: Status
    kept: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    error: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {k: v for k, v in vars(self).items() if v is not None}


@dataclass
class IngestReport:
    scope: str
    epoch: str
    dry_run: bool
    files: list[FileReport] = field(default_factory=list)

    @property
    def written(self) -> int:
        return sum(f.added + f.changed + f.removed for f in self.files)

    def as_dict(self) -> dict[str, object]:
        return {
            "scope": self.scope,
            "epoch": self.epoch,
            "dry_run": self.dry_run,
            "written": self.written,
            "files": [f.as_dict() for f in self.files],
        }


def docs_scope(raw: str) -> str:
    """`docs:<name>` is short for `domain:docs/<name>`; any scope as written is kept.

    Raises:
        InvalidBelief: not a valid scope.
    """
    scope = raw.strip().lower()
    if scope.startswith("docs:"):
        scope = "domain:docs/" + scope[len("docs:") :].strip("/")
    if not SCOPE_PATTERN.match(scope):
        raise InvalidBelief(
            f"scope {raw!r} is not a docs scope: use docs:<name> (domain:docs/<name>)",
            field="scope",
        )
    return scope


def check_source_scope(store: BeliefStore, user_id: str, scope: str) -> None:
    """Refuse a scope whose rules would not deliver passages as cited `(SOURCE)` material."""
    matching = [r for r in store.rules.matching([scope], user_id) if r.template]
    rule = max(matching, key=lambda r: (len(r.pattern), r.pattern), default=None)
    if rule is None or rule.label != SOURCE_LABEL:
        raise InvalidBelief(
            f"scope {scope} has no (SOURCE) rule, so its passages would not be cited: ingest "
            "into docs:<name>, or add a rule whose template opens with (SOURCE)",
            field="scope",
        )


def new_epoch(at: datetime) -> str:
    return f"e-{at.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"


def stored_passages(store: BeliefStore, user_id: str) -> dict[str, list[AnyBelief]]:
    """The user's live passages by source id, from the in-memory index."""
    out: dict[str, list[AnyBelief]] = {}
    for record in store.index.records(user_id):
        if is_passage(record) and record.is_live:
            out.setdefault(str(record.provenance.get("source")), []).append(record)
    return out


def ingest(
    store: BeliefStore,
    user_id: str,
    scope: str,
    files: Sequence[DocumentFile],
    *,
    root: str,
    present: Sequence[str] | None = None,
    dry_run: bool = False,
    progress: Callable[[FileReport], None] | None = None,
    epoch: str | None = None,
) -> IngestReport:
    """Sync `files` into `scope`. `present`: every path now under `root` (a folder's sync);
    the sources of `root` not among them are removed. None removes nothing (an upload)."""
    scope = docs_scope(scope)
    check_source_scope(store, user_id, scope)
    at = utcnow()
    report = IngestReport(scope, epoch or new_epoch(at), dry_run)
    stored = stored_passages(store, user_id)
    for doc in files:
        result = _ingest_file(store, user_id, scope, doc, root, report.epoch, at, stored, dry_run)
        report.files.append(result)
        if progress is not None:
            progress(result)
    if present is None:
        return report
    keep = set(present)
    for source in list_sources(store, user_id, scope=scope, include_deleted=False):
        if source.root == root and source.path not in keep:
            gone = FileReport(source.path, "removed", removed=source.passages)
            if not dry_run:
                delete_source(store, source.id, at=at)
            report.files.append(gone)
            if progress is not None:
                progress(gone)
    return report


def _ingest_file(
    store: BeliefStore,
    user_id: str,
    scope: str,
    doc: DocumentFile,
    root: str,
    epoch: str,
    at: datetime,
    stored: dict[str, list[AnyBelief]],
    dry_run: bool,
) -> FileReport:
    sid = source_id(user_id, scope, doc.path)
    existing = find_source(store, sid)
    digest = _file_hash(doc.text)
    if existing is not None and existing.deleted_at is None and existing.content_hash == digest:
        return FileReport(doc.path, "unchanged", kept=existing.passages)
    try:
        passages = cut(doc.text, doc.format)
    except Exception as exc:  # a malformed file is reported and skipped, never fatal
        return FileReport(doc.path, "failed", error=f"{type(exc).__name__}: {exc}")
    where = Where(user_id, scope, sid, doc.path, epoch, at)
    if existing is not None and existing.deleted_at is not None and not dry_run:
        restore_source(store, sid)  # deleted, ingested again: its passages are the start
        stored[sid] = [store.get(i, with_history=False) for i in existing.removed_ids]
    change: FilePlan = plan(where, passages, stored.get(sid, []))
    result = FileReport(
        doc.path,
        "new" if existing is None else "changed",
        kept=len(change.keep),
        added=len(change.create),
        changed=len(change.supersede),
        removed=len(change.remove),
    )
    if dry_run:
        return result
    source = Source(sid, user_id, scope, doc.path, root, doc.format, digest, doc.size,
                    len(passages), epoch, at)  # fmt: skip
    with store.transaction():
        apply(store, change)
        save_source(store, source)
    return result


def _file_hash(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:32]


def source_passages(store: BeliefStore, source: Source) -> list[AnyBelief]:
    """The source's live passages, in file order."""
    found = [
        r
        for r in store.index.records(source.user_id)
        if is_passage(r) and r.is_live and r.provenance.get("source") == source.id
    ]
    return sorted(found, key=lambda r: tuple(r.provenance.get("lines") or (0, 0)))


def delete_source(store: BeliefStore, sid: str, *, at: datetime | None = None) -> Source:
    """Soft delete: the passages leave retrieval; `restore_source` brings them back."""
    source = get_source(store, sid)
    if source.deleted_at is not None:
        return source
    ids = [p.id for p in source_passages(store, source)]
    deleted = Source(**{**vars(source), "deleted_at": at or utcnow(), "removed_ids": tuple(ids)})
    with store.transaction():
        for bid in ids:
            store.soft_delete(bid, actor=ACTOR, with_history=False)
        save_source(store, deleted)
    return deleted


def restore_source(store: BeliefStore, sid: str) -> Source:
    """Undo a soft delete within the grace period (before it is purged)."""
    source = get_source(store, sid)
    if source.deleted_at is None:
        return source
    restored = Source(**{**vars(source), "deleted_at": None, "removed_ids": ()})
    with store.transaction():
        for bid in source.removed_ids:
            store.restore(bid, actor=ACTOR, with_history=False)
        save_source(store, restored)
    return restored


def purge_sources(
    store: BeliefStore,
    user_id: str | None = None,
    *,
    ids: Sequence[str] = (),
    grace: timedelta = DELETE_GRACE,
    now: datetime | None = None,
) -> list[Source]:
    """Remove for good the deleted sources past `grace` (or those of `ids`, deleted, at once)
    with every row of their passages, old versions included."""
    now = now or utcnow()
    chosen = [
        s
        for s in list_sources(store, user_id)
        if s.deleted_at is not None and (s.id in ids if ids else s.deleted_at + grace <= now)
    ]
    for source in chosen:
        with store.transaction():
            for bid in _all_rows(store, source):
                store.hard_delete(bid, actor=ACTOR)
            drop_source(store, source.id)
    return chosen


def _all_rows(store: BeliefStore, source: Source) -> list[str]:
    rows = store.list(
        user_id=source.user_id, scope=source.scope, include_deleted=True, include_superseded=True
    )
    return [b.id for b in rows if is_passage(b) and b.provenance.get("source") == source.id]


def supported(name: str) -> str | None:
    """The format of a file name, if it is one ingest reads."""
    lower = name.lower()
    return next((fmt for ext, fmt in FORMATS.items() if lower.endswith(ext)), None)
