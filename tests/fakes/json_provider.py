"""A minimal provider over plain HTTP: each POST answered with one JSON document, every request
body recorded (for checking what LiteLLM sends a provider, in the provider's own protocol)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar


class JsonProvider(BaseHTTPRequestHandler):
    """Subclass and define `answer(body)`; `received` holds each request's path, auth and body."""

    received: ClassVar[list[dict[str, Any]]] = []

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        auth = self.headers.get("Authorization") or self.headers.get("x-api-key")
        self.received.append({"path": self.path, "auth": auth, **body})
        data = json.dumps(self.answer(body)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def serving(handler: type[JsonProvider]) -> Iterator[str]:
    """Serve `handler` on a free port; yields its base URL."""
    handler.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
