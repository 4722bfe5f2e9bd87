"""A real PostgreSQL server for the tests: Debian's binaries, a cluster in a temp dir, a unix
socket only (no TCP port), run as an unprivileged user when the tests run as root (PostgreSQL
refuses to run as root). One server per test session; a fresh schema per test."""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

import psycopg

SERVER_USER = "nobody"  # exists on every Debian system; owns only the temp cluster
ROLE = "tenure"


def postgres_bin() -> Path | None:
    """The newest installed server's bin directory, or None when no server is installed."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=_major)
    return found[-1].parent if found else None


def _major(path: Path) -> int:
    name = path.parent.parent.name
    return int(name) if name.isdigit() else 0


class PostgresServer:
    """`start()` makes and starts a cluster; `stop()` stops it and removes its directory."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="tenure-pg-"))
        self.data = self.root / "data"
        self.socket_dir = self.root / "run"
        self._as_user = os.geteuid() == 0
        self._schemas = itertools.count(1)
        self._options = ""

    def _run(self, *args: str) -> None:
        user = SERVER_USER if self._as_user else None
        done = subprocess.run(
            [str(self.bin_dir / args[0]), *args[1:]],
            user=user,
            capture_output=True,
            text=True,
            cwd=self.root,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({done.returncode}): {done.stderr[-2000:]}")

    def start(self) -> PostgresServer:
        self.socket_dir.mkdir()
        if self._as_user:
            owner = pwd.getpwnam(SERVER_USER)
            for path in (self.root, self.socket_dir):
                os.chown(path, owner.pw_uid, owner.pw_gid)
            self.root.chmod(0o755)
        self._run("initdb", "-D", str(self.data), "-U", ROLE, "-A", "trust", "-E", "UTF8")
        options = (
            f"-c listen_addresses='' -c unix_socket_directories={self.socket_dir} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=200"
        )
        self._options = options
        self.resume()
        return self

    def halt(self) -> None:
        """Stop the server (its clients' connections drop), keeping its data for `resume`."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        """Start the server (again), once it accepts connections."""
        log = str(self.root / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-l", log, "-o", self._options, "-w", "start")

    def stop(self) -> None:
        try:
            if self.data.exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres", schema: str | None = None) -> str:
        """A libpq URL reaching the server over its socket (the search path set to `schema`)."""
        url = f"postgresql://{ROLE}@/{database}?host={quote(str(self.socket_dir), safe='')}"
        if schema is not None:
            url += "&options=" + quote(f"-c search_path={schema}", safe="")
        return url

    def new_schema(self) -> str:
        """The URL of a new, empty schema: a fresh store for one test."""
        name = f"t{os.getpid()}_{next(self._schemas)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}".encode())
        return self.url(schema=name)

    def new_database(self) -> str:
        """The URL of a new, empty database (for processes that must not share a schema)."""
        name = f"db{os.getpid()}_{next(self._schemas)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}".encode())
        return self.url(name)
