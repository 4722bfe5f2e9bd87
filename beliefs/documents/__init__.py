"""Documents as a cited corpus: files cut into passages, stored as `document` beliefs in a docs
scope, synced on re-ingest, found by what they say and delivered as `(SOURCE)` hits."""

from beliefs.documents.cutting import FORMATS, Passage, cut
from beliefs.documents.ingest import (
    DocumentError,
    DocumentFile,
    FileReport,
    IngestReport,
    delete_source,
    docs_scope,
    ingest,
    purge_sources,
    restore_source,
    source_passages,
    supported,
)
from beliefs.documents.passage_index import PassageIndex
from beliefs.documents.retrieval import PassageFinder, finder_for
from beliefs.documents.sources import MIGRATIONS, Source, get_source, list_sources

__all__ = [
    "FORMATS",
    "MIGRATIONS",
    "DocumentError",
    "DocumentFile",
    "FileReport",
    "IngestReport",
    "Passage",
    "PassageFinder",
    "PassageIndex",
    "Source",
    "cut",
    "delete_source",
    "docs_scope",
    "finder_for",
    "get_source",
    "ingest",
    "list_sources",
    "purge_sources",
    "restore_source",
    "source_passages",
    "supported",
]
