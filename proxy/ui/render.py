"""Rendering pages: Jinja2 templates with autoescaping always on, the CSRF cookie, and the
headers that keep pages from running anything but our own script."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse

from proxy.scopes import grant_of
from proxy.security.csrf import CSRF_COOKIE, CSRF_FIELD, new_csrf_token

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}
NAV = (
    ("beliefs", "/beliefs", "Beliefs"),
    ("review", "/review", "Review"),
    ("audit", "/audit", "Audit"),
    ("rules", "/rules", "Rules"),
    ("sources", "/sources", "Sources"),
    ("status", "/status", "Status"),
)


def when(value: Any) -> str:
    """An ISO timestamp as `2026-11-30 09:30 UTC` (empty for None)."""
    if not value:
        return ""
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return str(value)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def short(value: Any, length: int = 160) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= length else text[: length - 1] + "…"


def show(value: Any) -> str:
    """A JSON value as a person reads it: lists comma-joined, true/false, — for nothing."""
    if value is None or value == []:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(show(v) for v in value)
    return str(value)


def new_environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,  # every template, whatever its name: belief text is never markup
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = when
    env.filters["short"] = short
    env.filters["show"] = show
    return env


class Renderer:
    # `login_enabled`: the key is set; tokens made later turn the log-out button on per request.
    def __init__(self, *, login_enabled: bool) -> None:
        self.env = new_environment()
        self.login_enabled = login_enabled

    def page(
        self, request: Request, template: str, *, status: int = 200, **context: Any
    ) -> HTMLResponse:
        token = request.cookies.get(CSRF_COOKIE)
        fresh = not token
        if not token:
            token = new_csrf_token()
        html = self.env.get_template(template).render(
            csrf=token,
            csrf_field=CSRF_FIELD,
            nav=NAV,
            login_enabled=self.login_enabled or grant_of(request.scope) is not None,
            path=request.url.path,
            **context,
        )
        response = HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)
        if fresh:
            response.set_cookie(CSRF_COOKIE, token, httponly=True, samesite="strict", path="/")
        return response
