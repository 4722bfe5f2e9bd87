"""The `sources` table: one row per ingested file, with what its last ingest wrote.

A source is a file in a docs scope; its passages are beliefs (`memory_class = "document"`)
whose provenance names the source. Deleting a source is soft (its passages leave retrieval and
come back on undo) until it is purged.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from beliefs.model.errors import BeliefNotFound
from beliefs.model.models import as_utc
from beliefs.store.migrations import Migration

if TYPE_CHECKING:
    from beliefs.store.database import BeliefDatabase

DOCUMENT_SOURCES = Migration(
    "documents",
    "sources",
    (
        """
        CREATE TABLE sources (
            id VARCHAR PRIMARY KEY,
            user_id VARCHAR NOT NULL,
            scope VARCHAR NOT NULL,
            path VARCHAR NOT NULL,
            root VARCHAR NOT NULL,
            format VARCHAR NOT NULL,
            content_hash VARCHAR NOT NULL,
            size_bytes BIGINT NOT NULL,
            passages INTEGER NOT NULL,
            epoch VARCHAR NOT NULL,
            ingested_at TIMESTAMPTZ NOT NULL,
            deleted_at TIMESTAMPTZ,
            removed_ids VARCHAR[] NOT NULL
        )
        """,
        "CREATE INDEX sources_user_scope ON sources (user_id, scope)",
    ),
)
MIGRATIONS: list[Migration] = [DOCUMENT_SOURCES]

COLUMNS = (
    "id",
    "user_id",
    "scope",
    "path",
    "root",
    "format",
    "content_hash",
    "size_bytes",
    "passages",
    "epoch",
    "ingested_at",
    "deleted_at",
    "removed_ids",
)


@dataclass(frozen=True)
class Source:
    id: str
    user_id: str
    scope: str
    path: str  # the file as cited: relative to the folder ingested
    root: str  # the folder (or file) the ingest was given; "upload" for the API
    format: str
    content_hash: str
    size_bytes: int
    passages: int
    epoch: str
    ingested_at: datetime
    deleted_at: datetime | None = None
    removed_ids: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user_id": self.user_id,
            "scope": self.scope,
            "path": self.path,
            "root": self.root,
            "format": self.format,
            "content_hash": self.content_hash,
            "size_bytes": self.size_bytes,
            "passages": self.passages,
            "epoch": self.epoch,
            "ingested_at": self.ingested_at.isoformat(),
            "deleted_at": self.deleted_at.isoformat() if self.deleted_at else None,
        }


def source_id(user_id: str, scope: str, path: str) -> str:
    digest = hashlib.sha256(f"{user_id}\x00{scope}\x00{path}".encode()).hexdigest()
    return f"s-{digest[:16]}"


def _source(row: tuple[Any, ...]) -> Source:
    data = dict(zip(COLUMNS, row, strict=True))
    data["ingested_at"] = as_utc(data["ingested_at"])
    data["deleted_at"] = as_utc(data["deleted_at"])
    data["removed_ids"] = tuple(data["removed_ids"] or ())
    return Source(**data)


def list_sources(
    db: BeliefDatabase,
    user_id: str | None = None,
    *,
    scope: str | None = None,
    include_deleted: bool = True,
) -> list[Source]:
    where, params = ["1 = 1"], []
    if user_id is not None:
        where.append("user_id = ?")
        params.append(user_id)
    if scope is not None:
        where.append("scope = ?")
        params.append(scope)
    if not include_deleted:
        where.append("deleted_at IS NULL")
    rows = db.execute(
        f"SELECT {', '.join(COLUMNS)} FROM sources WHERE {' AND '.join(where)} "
        "ORDER BY scope, path",
        params,
    ).fetchall()
    return [_source(r) for r in rows]


def find_source(db: BeliefDatabase, sid: str) -> Source | None:
    row = db.execute(f"SELECT {', '.join(COLUMNS)} FROM sources WHERE id = ?", [sid]).fetchone()
    return None if row is None else _source(row)


def get_source(db: BeliefDatabase, sid: str) -> Source:
    found = find_source(db, sid)
    if found is None:
        raise BeliefNotFound(f"no source with id {sid!r}; `tenure sources list` shows them")
    return found


def save_source(db: BeliefDatabase, source: Source) -> None:
    """Insert or replace the row (inside the caller's transaction)."""
    db.execute("DELETE FROM sources WHERE id = ?", [source.id])
    values = [getattr(source, c) for c in COLUMNS]
    values[COLUMNS.index("removed_ids")] = list(source.removed_ids)
    db.execute(
        f"INSERT INTO sources ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
        values,
    )


def drop_source(db: BeliefDatabase, sid: str) -> None:
    db.execute("DELETE FROM sources WHERE id = ?", [sid])
