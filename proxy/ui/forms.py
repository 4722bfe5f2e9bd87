"""Form posts from the pages (they work without JavaScript): check the CSRF token, call the
matching API operation, then redirect (303) to a page that shows the result."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from compaction import Compactor, PersonaKeeper
from proxy.api import beliefs as belief_api
from proxy.api import visibility as visibility_api
from proxy.api.compaction import put_persona, regenerate_persona, run_compaction
from proxy.api.jobs import resolve_conflict, retry_job
from proxy.errors import ProxyError
from proxy.security.access import SESSION_COOKIE, FailedAttempts, client_address
from proxy.security.credentials import Credentials
from proxy.security.csrf import CSRF_COOKIE, CSRF_FIELD, tokens_match
from proxy.security.grants import Grant
from proxy.ui.outcome import Outcome, attempt, query
from proxy.ui.pages import Pages

MAX_FORM_BYTES = 256 * 1024
Form = dict[str, str]


def split_names(raw: str) -> list[str]:
    """`a, b\\nc` -> ["a", "b", "c"]: one name per comma or line."""
    return [part.strip() for line in raw.splitlines() for part in line.split(",") if part.strip()]


def safe_next(raw: str | None, default: str) -> str:
    """Only paths on this server: never `//host` or a full URL."""
    if raw and raw.startswith("/") and not raw.startswith("//") and "\\" not in raw:
        return raw
    return default


def form_number(raw: str) -> float | str:
    """A typed number as a number; anything else as typed, so the API's refusal names it."""
    try:
        return float(raw)
    except ValueError:
        return raw


def with_notice(url: str, notice: str) -> str:
    return url + ("&" if "?" in url else "?") + f"notice={notice}"


class Forms:
    """The form posts; besides the pages' store, job queue and default user, the compactor
    and persona keeper they run, and the credentials and failed attempts the login checks."""

    def __init__(
        self,
        pages: Pages,
        *,
        compactor: Compactor,
        keeper: PersonaKeeper,
        credentials: Credentials,
        failures: FailedAttempts,
    ) -> None:
        self.pages = pages
        self.store = pages.store
        self.jobs = pages.jobs
        self.default_user = pages.settings.default_user
        self.compactor = compactor
        self.keeper = keeper
        self.credentials = credentials
        self.failures = failures

    async def read_form(self, request: Request) -> Form | Response:
        """The submitted form, or the page refusing it (too large, not a plain form, or the
        CSRF token missing or wrong). Pages only send urlencoded forms: no uploads."""
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            return self._refuse(request, 415, "send the page's form (urlencoded)")
        raw = bytearray()
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_FORM_BYTES:
                return self._refuse(request, 413, "the form is too large")
        form: Form = {}
        for name, value in parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True):
            form.setdefault(name, value)
        if not tokens_match(request.cookies.get(CSRF_COOKIE), form.get(CSRF_FIELD)):
            return self._refuse(
                request, 403, "the form's CSRF token is missing or expired; reload the page"
            )
        return form

    def _refuse(self, request: Request, status: int, message: str) -> HTMLResponse:
        result = Outcome(error=ProxyError(status, message))
        return self.pages.problem(request, result, title="Not accepted", back=request.url.path)

    def _failed(self, request: Request, result: Outcome, back: str) -> HTMLResponse:
        return self.pages.problem(request, result, title="Not saved", back=back)

    async def _api(
        self,
        request: Request,
        call: Callable[[Form], Awaitable[Outcome]],
        *,
        done: Callable[[Outcome, Form], str],
        back: str,
    ) -> Response:
        form = await self.read_form(request)
        if isinstance(form, Response):
            return form
        result = await call(form)
        if not result.ok:
            return self._failed(request, result, back)
        return RedirectResponse(done(result, form), status_code=303)

    async def create(self, request: Request) -> Response:
        async def call(form: Form) -> Outcome:
            body: dict[str, Any] = {
                "canonical_name": _text(form, "canonical_name"),
                "content": _text(form, "content"),
                "why_it_matters": _text(form, "why_it_matters"),
                "aliases": split_names(_text(form, "aliases")),
                "scope": split_names(_text(form, "scope")) or ["user:universal"],
                "type": _text(form, "type") or "preference",
            }
            if _text(form, "user_id"):
                body["user_id"] = _text(form, "user_id")
            if _text(form, "expires_in_days"):
                body["expires_in_days"] = form_number(_text(form, "expires_in_days"))
            return await attempt(belief_api.create_belief, self.store, self.default_user, body)

        return await self._api(
            request,
            call,
            done=lambda r, _: f"/beliefs/{r.data['id']}?notice=created",
            back="/beliefs",
        )

    async def edit(self, request: Request) -> Response:
        belief_id = request.path_params["belief_id"]
        here = f"/beliefs/{belief_id}"

        async def call(form: Form) -> Outcome:
            body: dict[str, Any] = {}
            for name in ("canonical_name", "content", "why_it_matters"):
                if name in form:
                    body[name] = _text(form, name)
            for name in ("aliases", "rejected_alternatives", "scope"):
                if name in form:
                    body[name] = split_names(_text(form, name))
            for name in ("epistemic_status", "delivery"):
                if _text(form, name):
                    body[name] = _text(form, name)
            if _text(form, "clear_expiry"):
                body["expires_in_days"] = None
            elif _text(form, "expires_in_days"):  # blank keeps the expiry it has
                body["expires_in_days"] = form_number(_text(form, "expires_in_days"))
            return await attempt(belief_api.patch_belief, self.store, belief_id, body)

        return await self._api(request, call, done=lambda *_: here + "?notice=saved", back=here)

    async def pin(self, request: Request) -> Response:
        belief_id = request.path_params["belief_id"]
        here = f"/beliefs/{belief_id}"

        def call(form: Form) -> Awaitable[Outcome]:
            pinned = _text(form, "pinned") == "true"
            return attempt(belief_api.patch_belief, self.store, belief_id, {"pinned": pinned})

        def done(result: Outcome, form: Form) -> str:
            notice = "pinned" if result.data["pinned"] else "unpinned"
            return with_notice(safe_next(_text(form, "next"), here), notice)

        return await self._api(request, call, done=done, back=here)

    async def share(self, request: Request) -> Response:
        """Share an agent's belief with every agent of the user, or take it back."""
        belief_id = request.path_params["belief_id"]
        here = f"/beliefs/{belief_id}"

        def call(form: Form) -> Awaitable[Outcome]:
            shared = _text(form, "shared") == "true"
            operation = visibility_api.share_belief if shared else visibility_api.unshare_belief
            return attempt(operation, self.store, belief_id)

        def done(result: Outcome, form: Form) -> str:
            return with_notice(here, "shared" if result.data["shared"] else "unshared")

        return await self._api(request, call, done=done, back=here)

    async def review(self, request: Request) -> Response:
        belief_id = request.path_params["belief_id"]
        here = f"/beliefs/{belief_id}"

        def call(form: Form) -> Awaitable[Outcome]:
            body = {"state": _text(form, "state")}
            return attempt(belief_api.review_belief, self.store, belief_id, body)

        def done(result: Outcome, form: Form) -> str:
            target = safe_next(_text(form, "next"), here)
            return with_notice(target, str(result.data["review_state"]))

        return await self._api(request, call, done=done, back=here)

    async def delete(self, request: Request) -> Response:
        belief_id = request.path_params["belief_id"]

        def call(form: Form) -> Awaitable[Outcome]:
            return attempt(belief_api.delete_belief, self.store, belief_id)

        return await self._api(
            request,
            call,
            done=lambda *_: f"/beliefs?deleted={belief_id}",
            back=f"/beliefs/{belief_id}",
        )

    async def restore(self, request: Request) -> Response:
        belief_id = request.path_params["belief_id"]
        here = f"/beliefs/{belief_id}"

        def call(form: Form) -> Awaitable[Outcome]:
            return attempt(belief_api.restore_belief, self.store, belief_id)

        return await self._api(request, call, done=lambda *_: here + "?notice=restored", back=here)

    async def resolve_conflict(self, request: Request) -> Response:
        conflict_id = request.path_params["conflict_id"]

        def call(form: Form) -> Awaitable[Outcome]:
            body = {"resolution": _text(form, "resolution")}
            return attempt(resolve_conflict, self.store, conflict_id, body)

        return await self._api(
            request, call, done=lambda *_: "/review?notice=resolved", back="/review"
        )

    async def retry_job(self, request: Request) -> Response:
        job_id = request.path_params["job_id"]

        def call(form: Form) -> Awaitable[Outcome]:
            return attempt(retry_job, self.store, self.jobs, job_id)

        return await self._api(
            request, call, done=lambda *_: "/status?notice=retried", back="/status"
        )

    async def compact_now(self, request: Request) -> Response:
        def call(form: Form) -> Awaitable[Outcome]:
            body = {"user": _text(form, "user")} if _text(form, "user") else {}
            return attempt(run_compaction, self.compactor, {}, body)

        return await self._api(
            request, call, done=lambda *_: "/status?notice=compacted", back="/status"
        )

    async def save_persona(self, request: Request) -> Response:
        def call(form: Form) -> Awaitable[Outcome]:
            asked = query(user=_text(form, "user"))
            if _text(form, "regenerate"):
                return attempt(
                    regenerate_persona, self.store, self.keeper, self.default_user, asked
                )
            return attempt(
                put_persona, self.store, self.default_user, asked, {"text": _text(form, "text")}
            )

        def done(result: Outcome, form: Form) -> str:
            return with_notice(f"/status?{urlencode({'user': _text(form, 'user')})}", "persona")

        return await self._api(request, call, done=done, back="/status")

    # -- login ---------------------------------------------------------------------------------

    async def login_page(self, request: Request) -> Response:
        target = safe_next(request.query_params.get("next"), "/beliefs")
        if not self.credentials.enforced:
            return RedirectResponse(target, status_code=303)
        return self.pages.renderer.page(request, "login.html", next=target)

    async def login(self, request: Request) -> Response:
        form = await self.read_form(request)
        if isinstance(form, Response):
            return form
        target = safe_next(_text(form, "next"), "/beliefs")
        credentials = self.credentials
        if not credentials.enforced:
            return RedirectResponse(target, status_code=303)
        failures = self.failures
        client = client_address(request.scope)
        wait = failures.retry_after(client)
        if wait is not None:
            refused = self.pages.renderer.page(
                request,
                "login.html",
                status=429,
                next=target,
                error=f"Too many wrong keys from this address. Try again in {wait} s.",
            )
            refused.headers["retry-after"] = str(wait)
            return refused
        grant = credentials.of_key(_text(form, "key"))
        if not isinstance(grant, Grant):
            failures.failed(client)
            error = "That is not the access key (TENURE_API_KEY) or an operator token. Try again."
            return self.pages.renderer.page(
                request, "login.html", status=401, next=target, error=error
            )
        if not grant.operator:  # one user's token never opens the pages over everyone's
            error = "That token opens one user's memory; the pages need an operator token."
            return self.pages.renderer.page(
                request, "login.html", status=403, next=target, error=error
            )
        response = RedirectResponse(target, status_code=303)
        session = credentials.new_session(grant)
        response.set_cookie(SESSION_COOKIE, session, httponly=True, samesite="strict", path="/")
        return response

    async def logout(self, request: Request) -> Response:
        form = await self.read_form(request)
        if isinstance(form, Response):
            return form
        cookie = request.cookies.get(SESSION_COOKIE)
        if cookie:
            self.credentials.end_session(cookie)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
        return response


def _text(form: Form, name: str) -> str:
    return form.get(name, "").strip()
