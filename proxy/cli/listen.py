"""The listening socket of `tenure serve`: bound before anything is printed, so a port that is
taken is reported (with what holds it) instead of a start-up that claims success."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import urllib.request
from pathlib import Path

from proxy.settings import SettingsError

__all__ = ["bind", "port_holder"]


def bind(host: str, port: int) -> socket.socket:
    """A socket listening on host:port, ready to hand to the server.

    Raises:
        SettingsError: the port is taken (naming what holds it) or the address is not usable.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            free = _free_near(host, port)
            other = (
                f"tenure serve --port {free} (or TENURE_PORT={free}; make serve PORT={free})"
                if free is not None
                else "tenure serve --port N (or TENURE_PORT=N)"
            )
            raise SettingsError(
                f"port {port} on {host} is already in use by {port_holder(host, port)}; stop "
                f"it, or serve on another port: {other}"
            ) from None
        raise SettingsError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def port_holder(host: str, port: int) -> str:
    """What listens on the port: a Tenure server (and its home), a process, or 'another program'."""
    tenure = _tenure_server(host, port)
    if tenure is not None:
        return tenure
    pid = _listening_pid(port)
    if pid is None:
        return "another program"
    return f"process {pid} ({_command(pid)})"


def _free_near(host: str, port: int, tries: int = 20) -> int | None:
    """The first port after `port` that this host can listen on now, so the hint works."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for candidate in range(port + 1, min(port + 1 + tries, 65536)):
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host.strip("[]"), candidate))
            except OSError:
                continue
            return candidate
    return None


def _tenure_server(host: str, port: int) -> str | None:
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    if host in ("0.0.0.0", "::"):
        shown = "127.0.0.1"
    try:
        url = f"http://{shown}:{port}/api/server"
        with urllib.request.urlopen(url, timeout=1) as response:
            info = json.loads(response.read())
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or "home" not in info:
        return None
    return f"a Tenure server (process {info.get('pid', '?')}) serving {info['home']}"


def _listening_pid(port: int) -> int | None:
    """The process owning the listening socket (Linux /proc; None where that is not visible)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if (
                    len(fields) > 9
                    and fields[3] == "0A"
                    and int(fields[1].rsplit(":", 1)[1], 16) == port
                ):
                    inodes.add(fields[9])
    if not inodes:
        return None
    targets = {f"socket:[{inode}]" for inode in inodes}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (entry / "fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) in targets:
                        return int(entry.name)
    return None


def _command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "unknown command"
    words = [w.decode(errors="replace") for w in raw.split(b"\0") if w]
    text = " ".join(words)
    return text if len(text) <= 80 else text[:79] + "…"
