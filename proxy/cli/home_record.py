"""What a home records about itself: a stable id, and the address of the server serving it.

The CLI reads both while a server holds the database: it uses that server only when the id the
server answers with is this home's, so it never reads another home's memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

HOME_ID_FILE = "home-id"
SERVER_FILE = "server.json"
# Where the home's memory lives when it is not the DuckDB file beside it: the PostgreSQL URL
# its server last ran on, password hidden, so a shell without that URL does not read an empty
# DuckDB file instead.
DATABASE_FILE = "database.json"

__all__ = [
    "ServerRecord",
    "clear_server",
    "home_id",
    "read_database",
    "read_server",
    "write_database",
    "write_server",
]


def home_id(home: Path) -> str:
    """This home's id, made on first use (two processes racing agree on the first one written)."""
    path = home / HOME_ID_FILE
    with contextlib.suppress(FileNotFoundError):
        existing = path.read_text(encoding="ascii").strip()
        if existing:
            return existing
    home.mkdir(parents=True, exist_ok=True)
    fresh = f"home_{secrets.token_hex(12)}"
    try:
        with path.open("x", encoding="ascii") as file:
            file.write(fresh + "\n")
    except FileExistsError:
        return path.read_text(encoding="ascii").strip()
    return fresh


@dataclass(frozen=True)
class ServerRecord:
    """Where the server serving a home listens, and which process it is."""

    url: str
    pid: int
    home_id: str


def write_server(home: Path, url: str) -> ServerRecord:
    """Record this process as the home's server (replacing a record a dead server left)."""
    record = ServerRecord(url=url, pid=os.getpid(), home_id=home_id(home))
    path = home / SERVER_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record.__dict__) + "\n", encoding="utf-8")
    tmp.replace(path)
    return record


def read_server(home: Path) -> ServerRecord | None:
    """The recorded server, or None when there is none or the record is unreadable."""
    try:
        data = json.loads((home / SERVER_FILE).read_text(encoding="utf-8"))
        return ServerRecord(
            url=str(data["url"]), pid=int(data["pid"]), home_id=str(data["home_id"])
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def clear_server(home: Path) -> None:
    """Remove the record if this process wrote it (a newer server's record stays)."""
    record = read_server(home)
    if record is not None and record.pid == os.getpid():
        with contextlib.suppress(FileNotFoundError):
            (home / SERVER_FILE).unlink()


def write_database(home: Path, shown_url: str | None) -> None:
    """Record the PostgreSQL database (password hidden) the home's server runs on; None
    (a server on the DuckDB file) removes the record."""
    path = home / DATABASE_FILE
    if shown_url is None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"database_url": shown_url}) + "\n", encoding="utf-8")
    tmp.replace(path)


def read_database(home: Path) -> str | None:
    """The recorded PostgreSQL URL (password hidden), or None."""
    try:
        data = json.loads((home / DATABASE_FILE).read_text(encoding="utf-8"))
        return str(data["database_url"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
