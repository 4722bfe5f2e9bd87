"""Errors the gateway raises itself, rendered as the OpenAI error envelope on the proxy paths
(with Anthropic's `type: error` wrapper on `/messages`) and as plain JSON on `/api`."""

from __future__ import annotations

import json
from typing import Any

from beliefs.errors import BeliefError


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
