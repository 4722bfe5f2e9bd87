"""`tenure serve --workers N`: N gateway processes sharing one listening socket (the kernel
hands each connection to one of them), each a replica on the shared PostgreSQL store."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time
from types import FrameType

from proxy.cli.home_record import clear_server, write_server
from proxy.settings import Settings, SettingsError


def check_workers(settings: Settings, workers: int) -> None:
    """Raises:
    SettingsError: several workers on DuckDB (one file, one writer).
    """
    if workers > 1 and settings.backend != "postgresql":
        raise SettingsError(
            f"--workers {workers} needs a PostgreSQL store: DuckDB allows one writer process, "
            "so the workers could not share the file; set TENURE_DATABASE_URL=postgresql://… "
            "(see docs/deployment.md), or run one process without --workers"
        )


def serve_workers(settings: Settings, sock: socket.socket, workers: int) -> None:
    """Fork the workers on the bound socket, record the server, and wait; SIGTERM or Ctrl-C
    stops them all. A worker that dies is reported and the others keep serving."""
    from proxy.cli.server import local_url, serve_on

    children: dict[int, int] = {}
    for n in range(workers):
        pid = os.fork()
        if pid == 0:  # the worker
            code = 0
            try:
                serve_on(settings, sock, worker=n)
            except BaseException as exc:
                print(f"error: worker {n}: {exc}", file=sys.stderr)
                code = 1
            finally:
                sys.stderr.flush()
                os._exit(code)
        children[pid] = n
    sock.close()
    write_server(settings.home, local_url(settings.host, settings.port))

    def stop(signum: int, frame: FrameType | None) -> None:
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        while children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            n = children.pop(pid, -1)
            if n >= 0 and os.waitstatus_to_exitcode(status) not in (0, 130, -15):
                print(f"tenure: worker {n} (pid {pid}) exited: {status}", file=sys.stderr)
            time.sleep(0)
    finally:
        clear_server(settings.home)
