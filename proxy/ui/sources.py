"""The Sources page: ingested documents by scope, each with its passages, last ingest, size
and epoch; delete with undo during the grace period; upload files into a docs scope. It
works through the `/api/sources` operations (`proxy.api.sources`), like the other pages."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from proxy.api import sources as api
from proxy.errors import ProxyError
from proxy.security.csrf import CSRF_COOKIE, CSRF_FIELD, tokens_match
from proxy.ui.forms import Forms
from proxy.ui.outcome import Outcome, attempt
from proxy.ui.pages import Pages

NOTICES = {
    "deleted": "Source deleted: its passages left retrieval.",
    "restored": "Source restored: its passages are delivered again.",
    "uploaded": "Uploaded.",
}


class SourcesPage:
    def __init__(self, pages: Pages, forms: Forms, docs: api.Documents) -> None:
        self.pages = pages
        self.forms = forms
        self.docs = docs

    async def page(self, request: Request, *, problem: Outcome | None = None) -> Response:
        docs = self.docs
        params = request.query_params
        listing = await attempt(api.sources, docs, params.get("user"), params.get("scope"))
        found = listing.data if listing.ok else None
        undo = params.get("undo")
        undone = next((s for s in found or [] if s["id"] == undo and s["deleted_at"]), None)
        scopes: dict[str, list[dict[str, Any]]] = {}
        for source in found or []:
            scopes.setdefault(source["scope"], []).append(source)
        return self.pages.renderer.page(
            request,
            "sources.html",
            status=problem.status if problem else 200,
            active="sources",
            notice=NOTICES.get(params.get("notice", "")),
            scopes=scopes,
            listing_error=None if listing.ok else listing.message,
            undo=undone,
            problem=problem,
            report=None,
        )

    async def source(self, request: Request) -> Response:
        docs = self.docs
        sid = request.path_params["source_id"]
        result = await attempt(api.source, docs, sid)
        if not result.ok:
            return self.pages.problem(request, result, title="No such source", back="/sources")
        return self.pages.renderer.page(
            request, "source.html", active="sources", source=result.data, notice=None
        )

    async def delete(self, request: Request) -> Response:
        return await self._change(request, api.remove, "deleted")

    async def restore(self, request: Request) -> Response:
        return await self._change(request, api.restore, "restored")

    async def _change(self, request: Request, operation: Any, notice: str) -> Response:
        form = await self.forms.read_form(request)
        if isinstance(form, Response):
            return form
        sid = request.path_params["source_id"]
        result = await attempt(operation, self.docs, sid)
        if not result.ok:
            return self.pages.problem(request, result, title="Not changed", back="/sources")
        undo = f"&undo={quote(sid, safe='')}" if notice == "deleted" else ""
        return RedirectResponse(f"/sources?notice={notice}{undo}", status_code=303)

    async def upload(self, request: Request) -> Response:
        """A multipart form: the CSRF token, a docs scope, one or more files."""
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "multipart/form-data":
            error = ProxyError(415, "send the page's upload form (multipart)")
            return await self.page(request, problem=Outcome(error=error))
        async with request.form(max_files=1000, max_part_size=api.MAX_UPLOAD_BYTES) as form:
            token = form.get(CSRF_FIELD)
            if not tokens_match(
                request.cookies.get(CSRF_COOKIE), token if isinstance(token, str) else None
            ):
                error = ProxyError(403, "the form's CSRF token is missing or expired; reload")
                return await self.page(request, problem=Outcome(error=error))
            files = []
            for item in form.getlist("files"):
                if isinstance(item, UploadFile) and item.filename:
                    data = await item.read()
                    files.append({"path": item.filename, "text": data.decode("utf-8", "replace")})
            scope = str(form.get("scope") or "")
        body = {"scope": scope, "files": files}
        result = await attempt(api.upload, self.docs, body)
        if not result.ok:
            return await self.page(request, problem=result)
        return RedirectResponse("/sources?notice=uploaded", status_code=303)
