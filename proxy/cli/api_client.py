"""The CLI's way in while the server runs: its JSON API over HTTP (DuckDB allows one writer)."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from beliefs.model.errors import BeliefError, BeliefNotFound


class ApiClient:
    """GETs and POSTs against a running gateway's JSON API at `base` (e.g. http://127.0.0.1:5757)."""

    def __init__(self, base: str, *, api_key: str | None = None, timeout: float = 30.0) -> None:
        self.base = base.rstrip("/")
        self._key = api_key
        self._timeout = timeout

    def get(self, path: str, **params: Any) -> Any:
        """The JSON body of `GET <base><path>?<params>` (None and False params are left out).

        Raises:
            BeliefNotFound: the API answered 404.
            BeliefError: any other error, or the server cannot be reached.
        """
        query = {k: _param(v) for k, v in params.items() if v is not None and v is not False}
        url = self.base + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        return self._send(urllib.request.Request(url, headers={"Accept": "application/json"}))

    def post(self, path: str, body: Any = None) -> Any:
        """The JSON body of `POST <base><path>` with `body` as JSON; errors as for `get`."""
        request = urllib.request.Request(
            self.base + path,
            data=json.dumps(body if body is not None else {}).encode(),
            headers={"Accept": "application/json", "Content-Type": "application/json"},
            method="POST",
        )
        return self._send(request)

    def send(
        self, method: str, path: str, body: Any = None, *, text: str | None = None, **params: Any
    ) -> Any:
        """The JSON body of `<method> <base><path>?<params>` with `body` (if any) as JSON, or
        `text` sent as it is."""
        query = {k: _param(v) for k, v in params.items() if v is not None and v is not False}
        url = self.base + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        data = text.encode() if text is not None else None
        if body is not None:
            data = json.dumps(body).encode()
        request = urllib.request.Request(
            url, data=data, method=method, headers={"Accept": "application/json"}
        )
        if data is not None:
            kind = "application/json" if text is None else "text/plain; charset=utf-8"
            request.add_header("Content-Type", kind)
        return self._send(request)

    def _send(self, request: urllib.request.Request) -> Any:
        if self._key:
            request.add_header("Authorization", f"Bearer {self._key}")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                raw = response.read()
                return json.loads(raw) if raw else None  # 204: nothing to say
        except urllib.error.HTTPError as exc:
            message = _message(exc.read()) or f"{exc.code} {exc.reason}"
            if exc.code == 404:
                raise BeliefNotFound(message) from None
            raise BeliefError(f"the server at {self.base} answered {exc.code}: {message}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise ServerUnreachable(f"no answer from {self.base} ({exc})") from None


class ServerUnreachable(BeliefError):
    """Nothing answers at the server's address."""


def _param(value: Any) -> str:
    return "true" if value is True else str(value)


def _message(raw: bytes) -> str:
    try:
        error = json.loads(raw).get("error")
    except (ValueError, AttributeError):
        return ""
    return str(error.get("message", "")) if isinstance(error, dict) else str(error or "")
