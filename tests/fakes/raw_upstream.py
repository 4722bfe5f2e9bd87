"""A provider stand-in that answers with exact bytes, for replies no well-behaved HTTP server
library would send (a 304 with a length, extra bytes after a reply, a reset mid-body).

Runs a threaded TCP server on 127.0.0.1 (free port); each request's head and body are recorded,
then the next scripted answer is written as given. The server stops with the context manager.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Callable
from types import TracebackType

# An answer: bytes to write, or a function that writes to the socket itself (to reset it …).
Answer = bytes | Callable[[socket.socket], None]


class RawUpstream:
    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.requests: list[tuple[bytes, bytes]] = []  # (head, body)
        self._lock = threading.Lock()
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                outer._serve(self.request)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> RawUpstream:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _serve(self, conn: socket.socket) -> None:
        buffered = b""
        while True:
            while b"\r\n\r\n" not in buffered:
                data = conn.recv(65536)
                if not data:
                    return
                buffered += data
            head, _, buffered = buffered.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(buffered) < length:
                data = conn.recv(65536)
                if not data:
                    return
                buffered += data
            body, buffered = buffered[:length], buffered[length:]
            with self._lock:
                self.requests.append((head, body))
                answer = self.answers.pop(0) if self.answers else None
            if answer is None:
                return
            if isinstance(answer, bytes):
                conn.sendall(answer)
            else:
                answer(conn)
                return
