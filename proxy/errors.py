"""Errors the gateway raises itself, rendered as the OpenAI error envelope on the proxy paths
(with Anthropic's `type: error` wrapper on `/messages`) and as plain JSON on `/api`."""

from __future__ import annotations

import json
from typing import Any


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


def api_envelope(status: int, message: str, *, type: str = "invalid_request") -> bytes:
    """The `/api` error body: `{"error": {"message", "type", "status"}}`."""
    return json.dumps({"error": {"message": message, "type": type, "status": status}}).encode()
