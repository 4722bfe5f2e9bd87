"""`/api/sources`: ingest documents (upload), list sources with their passages, delete a
source (soft, with undo during the grace period), purge.

The operations and the routes are given their collaborators (`Documents`: the store, its
thread, the settings) by the app.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from beliefs.context.citations import where
from beliefs.documents import (
    DocumentFile,
    delete_source,
    get_source,
    ingest,
    list_sources,
    purge_sources,
    restore_source,
    source_passages,
    supported,
)
from beliefs.documents.ingest import DELETE_GRACE, docs_scope
from beliefs.documents.sources import Source
from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from proxy.errors import ProxyError, bad_field
from proxy.settings import Settings

MAX_UPLOAD_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Documents:
    """What the sources operations work with."""

    store: BeliefStore
    thread: StoreThread
    settings: Settings
    grace: timedelta = DELETE_GRACE


Handler = Callable[["Documents", Request], Awaitable[Response]]


def source_view(source: Source, grace: timedelta) -> dict[str, Any]:
    out = source.as_dict()
    if source.deleted_at is not None:
        out["undo_until"] = (source.deleted_at + grace).isoformat()
    return out


async def sources(docs: Documents, user: str | None, scope: str | None) -> list[dict[str, Any]]:
    """Every source (deleted ones too, with until when they can be restored)."""
    scope = docs_scope(scope) if scope else None
    found = await docs.thread.run(list_sources, docs.store, user, scope=scope)
    return [source_view(s, docs.grace) for s in found]


async def source(docs: Documents, sid: str) -> dict[str, Any]:
    """One source and its live passages, in file order."""

    def read() -> dict[str, Any]:
        found = get_source(docs.store, sid)
        passages = source_passages(docs.store, found)
        out = source_view(found, docs.grace)
        out["passages_live"] = [
            {
                "id": p.id,
                "where": where(p),
                "lines": list(p.provenance.get("lines") or ()),
                "hash": p.provenance.get("hash"),
                "epoch": p.provenance.get("epoch"),
                "content": p.content,
            }
            for p in passages
        ]
        return out

    return await docs.thread.run(read)


def upload_files(raw: Any) -> list[DocumentFile]:
    """The `files` of an upload body: each a `path` (as cited) and its `text`."""
    if not isinstance(raw, list) or not all(isinstance(f, dict) for f in raw):
        raise bad_field("files", "files must be a list of {path, text} objects")
    out = []
    for item in raw:
        path, text = item.get("path"), item.get("text")
        if not isinstance(path, str) or not path.strip() or not isinstance(text, str):
            raise bad_field("files", "each file needs a path and its text, both strings")
        fmt = supported(path)
        if fmt is None or fmt == "pdf":
            raise bad_field(
                "files",
                f"{path}: send Markdown, plain text, reStructuredText or HTML "
                "(a PDF is read by `tenure ingest`, which sends its text)",
            )
        out.append(DocumentFile(path.strip().lstrip("/"), text, fmt, len(text.encode())))
    return out


async def upload(docs: Documents, body: dict[str, Any]) -> dict[str, Any]:
    """Ingest files into a docs scope: `scope` (docs:<name>), `files`, optional `user`,
    `root` (sources of that root missing from `present` are removed), `dry_run`."""
    scope = body.get("scope")
    if not isinstance(scope, str) or not scope.strip():
        raise bad_field("scope", "name the docs scope to ingest into, e.g. docs:runbooks")
    files = upload_files(body.get("files", []))
    user = body.get("user") or docs.settings.default_user
    root = str(body.get("root") or "upload")
    present = body.get("present")
    if present is not None and not (
        isinstance(present, list) and all(isinstance(p, str) for p in present)
    ):
        raise bad_field("present", "present must be a list of paths")
    report = await docs.thread.run(
        ingest,
        docs.store,
        str(user),
        scope,
        files,
        root=root,
        present=present,
        dry_run=bool(body.get("dry_run")),
        epoch=body.get("epoch") if isinstance(body.get("epoch"), str) else None,
    )
    return report.as_dict()


async def remove(docs: Documents, sid: str) -> dict[str, Any]:
    """Soft delete: its passages leave retrieval until restored or purged."""
    return source_view(await docs.thread.run(delete_source, docs.store, sid), docs.grace)


async def restore(docs: Documents, sid: str) -> dict[str, Any]:
    return source_view(await docs.thread.run(restore_source, docs.store, sid), docs.grace)


async def purge(docs: Documents, ids: list[str]) -> dict[str, Any]:
    """Deleted sources past the grace period, or the deleted ones named, removed for good."""
    gone = await docs.thread.run(purge_sources, docs.store, ids=ids, grace=docs.grace)
    return {"purged": [s.id for s in gone]}


async def _read_body(request: Request) -> dict[str, Any]:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "multipart/form-data":
        return await _multipart(request)
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_UPLOAD_BYTES:
            raise ProxyError(413, f"the upload is over {MAX_UPLOAD_BYTES} bytes; send it in parts")
    try:
        body = json.loads(bytes(raw) or b"{}")
    except ValueError:
        raise bad_field("body", "the body is not valid JSON; send a JSON object") from None
    if not isinstance(body, dict):
        raise bad_field("body", "send a JSON object")
    return body


async def _multipart(request: Request) -> dict[str, Any]:
    async with request.form(max_files=1000, max_part_size=MAX_UPLOAD_BYTES) as form:
        files = []
        for item in form.getlist("files"):
            if isinstance(item, UploadFile) and item.filename:
                data = await item.read()
                try:
                    files.append({"path": item.filename, "text": data.decode("utf-8")})
                except UnicodeDecodeError:
                    raise bad_field("files", f"{item.filename} is not UTF-8 text") from None
        return {
            "scope": str(form.get("scope") or ""),
            "user": str(form.get("user") or "") or None,
            "files": files,
        }


async def sources_list(docs: Documents, request: Request) -> Response:
    """Ingested documents (deleted ones with `undo_until`): `user`, `scope` filter."""
    params = request.query_params
    found = await sources(docs, params.get("user"), params.get("scope"))
    return JSONResponse(found)


async def source_detail(docs: Documents, request: Request) -> Response:
    """One source and its live passages, in file order."""
    return JSONResponse(await source(docs, request.path_params["source_id"]))


async def sources_upload(docs: Documents, request: Request) -> Response:
    """Ingest files into a docs scope (JSON or a multipart form); answers the sync report."""
    body = await _read_body(request)
    return JSONResponse(await upload(docs, body), status_code=201)


async def source_delete(docs: Documents, request: Request) -> Response:
    """Soft delete: its passages leave retrieval until restored or purged."""
    return JSONResponse(await remove(docs, request.path_params["source_id"]))


async def source_restore(docs: Documents, request: Request) -> Response:
    """Undo a delete during the grace period."""
    return JSONResponse(await restore(docs, request.path_params["source_id"]))


async def sources_purge(docs: Documents, request: Request) -> Response:
    """Remove deleted sources for good: `ids` now, else those past the grace period."""
    body = await _read_body(request)
    ids = body.get("ids") or []
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise bad_field("ids", "ids must be a list of source ids")
    return JSONResponse(await purge(docs, ids))


def source_routes(docs: Documents) -> list[BaseRoute]:
    """Before the API's catch-all; each handler is given the documents it works on."""

    def given(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def serve(request: Request) -> Response:
            return await handler(docs, request)

        serve.__name__, serve.__doc__ = handler.__name__, handler.__doc__  # for the OpenAPI
        return serve

    return [
        Route("/api/sources", given(sources_list), methods=["GET"]),
        Route("/api/sources", given(sources_upload), methods=["POST"]),
        Route("/api/sources/purge", given(sources_purge), methods=["POST"]),
        Route("/api/sources/{source_id}", given(source_detail), methods=["GET"]),
        Route("/api/sources/{source_id}", given(source_delete), methods=["DELETE"]),
        Route("/api/sources/{source_id}/restore", given(source_restore), methods=["POST"]),
    ]
