"""Errors the gateway raises itself, and the one place an error is rendered: the OpenAI error
envelope on the proxy paths (with Anthropic's `type: error` wrapper on `/messages`), plain JSON
on `/api`, and a page on the UI's paths."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from beliefs.model.errors import BeliefError
from proxy.security.access import is_ui_page

JSON = b"application/json"
HTML = b"text/html; charset=utf-8"


class ProxyError(Exception):
    """An error of the gateway itself (not one relayed from the upstream)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code


def bad_field(param: str, message: str) -> ProxyError:
    """A 400 naming the request field that is wrong."""
    return ProxyError(400, message, param=param, code="invalid_value")


def as_proxy_error(exc: Exception, *, request_id: str | None = None) -> ProxyError:
    """Any error as the one HTTP answers: our own as it is, the store's and the extractor's
    with their status and field, anything else a 500 that points at the server log."""
    if isinstance(exc, ProxyError):
        return exc
    if isinstance(exc, BeliefError):
        return ProxyError(exc.status, exc.message, param=exc.field)
    where = f" (request {request_id})" if request_id else ""
    return ProxyError(
        500, f"internal error in the gateway{where}; see the server log", type="server_error"
    )


def openai_envelope(error: ProxyError, *, anthropic: bool = False) -> bytes:
    """`{"error": {message, type, param, code}}`; for Anthropic clients also `"type": "error"`."""
    body: dict[str, Any] = {
        "error": {
            "message": error.message,
            "type": error.type,
            "param": error.param,
            "code": error.code,
        }
    }
    if anthropic:
        body = {"type": "error", **body}
    return json.dumps(body).encode()


def api_envelope(
    status: int, message: str, *, type: str = "invalid_request", field: str | None = None
) -> bytes:
    """The `/api` error body: `{"error": {"message", "type", "status", "field"?}}`; `field`
    names the request field (or query parameter) that is wrong."""
    error: dict[str, Any] = {"message": message, "type": type, "status": status}
    if field is not None:
        error["field"] = field
    return json.dumps({"error": error}).encode()


def error_reply(error: ProxyError, path: str) -> tuple[bytes, bytes]:
    """The body and content type `error` is answered with on `path`: JSON on `/api`, a page
    in the UI, JSON-RPC on `/mcp`, the OpenAI (or Anthropic) envelope on the proxy paths."""
    if path.startswith("/api/"):
        return api_envelope(error.status, error.message, type=error.type, field=error.param), JSON
    if is_ui_page(path) or path == "/login":
        return error_page(error), HTML
    if path == "/mcp" or (path.startswith("/scope/") and path.endswith("/mcp")):
        return jsonrpc_envelope(error), JSON
    return openai_envelope(error, anthropic=path.rstrip("/").endswith("/messages")), JSON


def jsonrpc_envelope(error: ProxyError) -> bytes:
    """The JSON-RPC error the MCP SDK itself answers a refused HTTP request with (no id: the
    request was not read), with our `type` and field beside its code."""
    data = {"type": error.type, **({"field": error.param} if error.param else {})}
    body = {"code": -32600, "message": error.message, "data": data}  # -32600: invalid request
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": body}).encode()


def error_page(error: ProxyError) -> bytes:
    """A plain page for a browser: the status, the message and the field at fault, escaped."""
    field = f"<p>Field: {escape(error.param)}</p>" if error.param else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{error.status} · Tenure</title></head><body>"
        f"<h1>{error.status}</h1><p>{escape(error.message)}</p>{field}"
        '<p><a href="/beliefs">Back to the beliefs</a></p></body></html>'
    ).encode()
