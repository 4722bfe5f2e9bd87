"""How the pages get their data: in-process calls to the JSON API's own routes (the UI uses
nothing else), so an endpoint that is not mounted shows as "not available" instead of failing."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.types import Message

from beliefs.errors import BeliefError
from proxy.errors import ProxyError

log = logging.getLogger("tenure.ui")


@dataclass(frozen=True)
class ApiResult:
    status: int
    data: Any

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def available(self) -> bool:
        """False when no route answers the path (a part of the server that is not installed)."""
        return not (
            self.status == 404 and self.error_type == "not_found" and "no API" in self.message
        )

    @property
    def error_type(self) -> str:
        error = self.data.get("error") if isinstance(self.data, dict) else None
        return str(error.get("type", "")) if isinstance(error, dict) else ""

    @property
    def message(self) -> str:
        error = self.data.get("error") if isinstance(self.data, dict) else None
        if isinstance(error, dict):
            return str(error.get("message", ""))
        return "" if self.ok else f"the API answered {self.status}"

    @property
    def field(self) -> str | None:
        error = self.data.get("error") if isinstance(self.data, dict) else None
        return str(error["field"]) if isinstance(error, dict) and "field" in error else None


class Api:
    """`await api.get("/api/beliefs", user="alice")`, `await api.post(path, {...})`."""

    def __init__(self, request: Request) -> None:
        self.request = request

    async def get(self, path: str, **params: Any) -> ApiResult:
        return await self.call("GET", path, params=params)

    async def post(self, path: str, body: Any = None, **params: Any) -> ApiResult:
        return await self.call("POST", path, params=params, body=body if body is not None else {})

    async def put(self, path: str, body: Any, **params: Any) -> ApiResult:
        return await self.call("PUT", path, params=params, body=body)

    async def patch(self, path: str, body: Any) -> ApiResult:
        return await self.call("PATCH", path, body=body)

    async def delete(self, path: str) -> ApiResult:
        return await self.call("DELETE", path)

    async def call(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        body: Any = None,
    ) -> ApiResult:
        query = urlencode(
            {k: _param(v) for k, v in (params or {}).items() if v is not None and v != ""}
        )
        payload = b"" if body is None else json.dumps(body).encode()
        outer = self.request.scope
        scope = {
            "type": "http",
            "asgi": outer.get("asgi", {"version": "3.0"}),
            "http_version": "1.1",
            "method": method,
            "scheme": outer.get("scheme", "http"),
            "server": outer.get("server"),
            "client": outer.get("client"),
            "root_path": "",
            "path": path,
            "raw_path": path.encode(),
            "query_string": query.encode(),
            "headers": [(b"content-type", b"application/json"), (b"accept", b"application/json")],
            "app": outer["app"],
            "state": dict(outer.get("state", {})),
        }
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": payload, "more_body": False}

        status = 500
        chunks: list[bytes] = []

        async def send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        try:
            await self.request.app.router(scope, receive, send)
        except ProxyError as exc:
            error = {"message": exc.message, "type": exc.type, "status": exc.status}
            if exc.param is not None:
                error["field"] = exc.param
            return ApiResult(exc.status, {"error": error})
        except BeliefError as exc:
            belief_error: dict[str, Any] = {"message": exc.message, "type": "error"}
            if exc.field is not None:
                belief_error["field"] = exc.field
            return ApiResult(exc.status, {"error": belief_error})
        except Exception:
            log.exception("UI call %s %s failed", method, path)
            message = "internal error; see the server log"
            return ApiResult(500, {"error": {"message": message, "type": "server_error"}})
        raw = b"".join(chunks)
        try:
            data = json.loads(raw) if raw else None
        except ValueError:
            data = raw.decode("utf-8", "replace")
        return ApiResult(status, data)


def _param(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)
