"""The rules page: every namespace rule with its label and warnings, forms to add, edit and
delete rules, and a prompt preview that shows exactly what a request would receive. Like the
other pages it reads and writes only through the JSON API's operations (`/api/rules`,
`/api/prompts/preview`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, get_args
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from beliefs.model.models import MemoryClass
from compaction import PersonaKeeper
from proxy.api import delivery
from proxy.ui.forms import Form, Forms, form_number
from proxy.ui.outcome import Outcome, attempt, query
from proxy.ui.pages import NOTICES, Pages

PREVIEW_FIELDS = ("user", "scope", "agent", "model", "query")
RULE_FIELDS = ("pattern", "bonus", "template", "memory_class")
NEW = "new"  # the add form, when it is the one that failed


def rule_body(form: Form) -> dict[str, Any]:
    """The API body a rule form stands for. A bonus that is not a number is sent as typed, so
    the API's refusal names the field; a blank template or class means none."""
    raw_bonus = form.get("bonus", "").strip()
    # Browsers send textarea line breaks as CRLF; the template is stored with plain newlines.
    template = form.get("template", "").replace("\r\n", "\n").strip()
    return {
        "pattern": form.get("pattern", "").strip(),
        "bonus": form_number(raw_bonus) if raw_bonus else 0.0,
        "template": template or None,
        "memory_class": form.get("memory_class", "").strip() or None,
    }


def _anchor(rule_id: str) -> str:
    return "rule-" + quote(rule_id, safe="")


class RulesPage:
    def __init__(self, pages: Pages, forms: Forms, keeper: PersonaKeeper) -> None:
        self.pages = pages
        self.forms = forms
        self.store = pages.store
        self.settings = pages.settings
        self.keeper = keeper  # the preview shows the persona a request would receive

    async def page(self, request: Request) -> Response:
        return await self.render(request)

    async def render(
        self,
        request: Request,
        *,
        status: int = 200,
        problem: Outcome | None = None,
        draft: Form | None = None,
        editing: str | None = None,
    ) -> Response:
        """The page; after a refused form, with the API's reason and the values as typed."""
        listing = await attempt(delivery.list_rules, self.store)
        params = request.query_params
        asked = {name: params.get(name, "").strip() for name in PREVIEW_FIELDS}
        preview = preview_problem = None
        if "preview" in params:
            result = await attempt(
                delivery.preview, self.store, self.settings, self.keeper, query(**asked)
            )
            if result.ok and isinstance(result.data, dict):
                preview = result.data
            else:
                preview_problem = result
                status = max(status, result.status)
        rules = listing.data if listing.ok and isinstance(listing.data, list) else None
        return self.pages.renderer.page(
            request,
            "rules.html",
            status=status,
            active="rules",
            notice=NOTICES.get(params.get("notice", "")),
            rules=rules,
            rules_error=None if listing.ok else listing.message,
            classes=get_args(MemoryClass),
            problem=problem,
            draft=draft or {},
            editing=editing,
            asked=asked,
            default_user=self.settings.default_user,
            default_scopes=", ".join(self.settings.default_scopes),
            preview=preview,
            preview_problem=preview_problem,
            anchor=_anchor,
        )

    async def _submit(
        self,
        request: Request,
        editing: str | None,
        call: Callable[[Form], Awaitable[Outcome]],
        done: Callable[[Outcome], str],
    ) -> Response:
        """Check the form's token, make the API call, then redirect; a refusal re-renders the
        page with the reason beside the form that was sent (`editing`), values kept."""
        form = await self.forms.read_form(request)
        if isinstance(form, Response):
            return form
        result = await call(form)
        if not result.ok:
            draft = {name: form.get(name, "") for name in RULE_FIELDS} if editing else None
            return await self.render(
                request, status=result.status, problem=result, draft=draft, editing=editing
            )
        return RedirectResponse(done(result), status_code=303)

    async def add(self, request: Request) -> Response:
        def done(result: Outcome) -> str:
            return f"/rules?notice=rule_added#{_anchor(str(result.data['id']))}"

        return await self._submit(
            request, NEW, lambda form: attempt(delivery.add_rule, self.store, rule_body(form)), done
        )

    async def edit(self, request: Request) -> Response:
        rule_id = request.path_params["rule_id"]

        def call(form: Form) -> Awaitable[Outcome]:
            return attempt(delivery.edit_rule, self.store, rule_id, rule_body(form))

        def done(result: Outcome) -> str:
            return f"/rules?notice=rule_saved#{_anchor(rule_id)}"

        return await self._submit(request, rule_id, call, done)

    async def delete(self, request: Request) -> Response:
        rule_id = request.path_params["rule_id"]

        def call(form: Form) -> Awaitable[Outcome]:
            return attempt(delivery.remove_rule, self.store, rule_id)

        return await self._submit(request, None, call, lambda _: "/rules?notice=rule_deleted")
