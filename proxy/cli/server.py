"""Running the gateway: one uvicorn process serving the proxy, the API and the UI."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import sys
from types import FrameType

from beliefs.index.encoder import packaged_model_dir
from beliefs.model.errors import StoreLocked
from beliefs.opening import open_store
from beliefs.store.backend import redacted
from beliefs.store.belief_store import BeliefStore
from proxy.app import create_app
from proxy.cli.home_record import (
    clear_server,
    read_database,
    read_server,
    write_database,
    write_server,
)
from proxy.cli.listen import bind
from proxy.cli.logs import configure_logging
from proxy.security.access import is_loopback
from proxy.settings import Settings, SettingsError

__all__ = ["check_bind", "is_loopback", "serve"]


def check_bind(host: str, api_key: str | None) -> None:
    """Raises:
    SettingsError: a non-loopback host without TENURE_API_KEY.
    """
    if not is_loopback(host) and not api_key:
        raise SettingsError(
            f"refusing to listen on {host}: it is reachable from other machines and "
            "TENURE_API_KEY is not set. Set TENURE_API_KEY (clients then send "
            "Authorization: Bearer <key>) or use --host 127.0.0.1"
        )


def local_url(host: str, port: int) -> str:
    """Where a process on this machine reaches the server."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    shown = "[::1]" if shown == "::" else shown
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


def serve(settings: Settings, workers: int = 1) -> None:
    """Bind the port, open the store, record this server in the home, then serve until
    interrupted. Nothing claims success before the port and the database are ours.

    Raises:
        SettingsError: the bind address is refused or the port is taken.
        BeliefError: TENURE_SEMANTIC is set and the model package is not installed.
        StoreLocked: another process holds the database.
    """
    check_bind(settings.host, settings.api_key)
    if settings.semantic:  # refused now, as the CLI's own commands do, not ignored in silence
        packaged_model_dir()
    configure_logging(settings)
    # The store thread holds the GIL in short bursts; let the event loop take it back sooner
    # than the default 5 ms so those bursts do not show up in the proxy's tail latency.
    sys.setswitchinterval(0.001)
    sock = bind(settings.host, settings.port)
    if settings.database_url is not None:  # a shell of this home without the URL is told so
        settings.home.mkdir(parents=True, exist_ok=True)
        write_database(settings.home, redacted(settings.database_url))
    if workers > 1:
        from proxy.cli.workers import serve_workers

        serve_workers(settings, sock, workers)
        return
    serve_on(settings, sock)


def serve_on(settings: Settings, sock: socket.socket, *, worker: int | None = None) -> None:
    """Open the store and serve on the bound socket until stopped; a `worker` of several
    (`--workers`) leaves the home's server record to the parent."""
    import uvicorn  # the server is only needed by `tenure serve`

    from proxy.cli.request_limits import limited_protocol

    if worker is not None:
        settings = settings.model_copy(
            update={"replica_id": f"{settings.replica_id or socket.gethostname()}-w{worker}"}
        )
    new = settings.database_url is None and not settings.db_path.exists()
    was = read_database(settings.home) if settings.database_url is None else None
    try:
        store = open_served(settings)
    except BaseException:
        sock.close()
        raise
    url = local_url(settings.host, settings.port)
    banner = f"tenure: serving on {url}/v1 ({_where(settings, new, was)}); UI at {url}/beliefs"
    if worker:
        pass  # of several workers, the first prints the banner for all
    elif settings.log_format == "json":  # every line of a JSON log is JSON
        logging.getLogger("tenure.serve").warning(banner)
    else:
        print(banner, file=sys.stderr)
    if worker is None:
        write_server(settings.home, url)
        if was is not None:  # this home's server now runs on its DuckDB file (the banner said)
            write_database(settings.home, None)

    def stopped(signum: int, frame: FrameType | None) -> None:
        """uvicorn stops gracefully on SIGTERM or Ctrl-C (the lifespan has closed the runtime),
        then raises the signal again for the handler it found, which is this one: close the
        store, drop the record and leave, without waiting on threads a model library left."""
        if worker is None:
            clear_server(settings.home)
        with contextlib.suppress(Exception):
            store.close()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0 if signum == signal.SIGTERM else 130)

    signal.signal(signal.SIGTERM, stopped)
    signal.signal(signal.SIGINT, stopped)
    try:
        config = uvicorn.Config(
            create_app(settings, store=store),
            log_level=settings.log_level,
            log_config=None,  # our handler (text or JSON) for uvicorn's lines too
            access_log=False,  # the gateway writes its own line per proxied request
            server_header=False,
            proxy_headers=False,  # nothing reads the client address; skip the header rewrite
            date_header=False,
            lifespan="on",
            http=limited_protocol(settings.max_header_bytes, settings.read_timeout),
        )
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        if worker is None:
            clear_server(settings.home)
        with contextlib.suppress(OSError):
            sock.close()
        store.close()


def open_served(settings: Settings) -> BeliefStore:
    """The store to serve, its index filling in the background: /healthz and memory-less
    proxying answer at once, whatever the store's size.

    Raises:
        StoreLocked: another process holds it (named when it is this home's server).
    """
    settings.home.mkdir(parents=True, exist_ok=True)
    try:
        return open_store(
            settings.store_location,
            background=True,
            replica=settings.replica_id,
            bound=settings.index_max_beliefs,
        )
    except StoreLocked as exc:
        record = read_server(settings.home)
        if record is None:
            raise
        raise StoreLocked(
            f"{exc.message.split('; ', 1)[0]}: the Tenure server recorded at {record.url} "
            f"(pid {record.pid}) serves this home already; use it, or stop it first"
        ) from None


def _where(settings: Settings, new: bool, was: str | None) -> str:
    """The banner's account of the upstream and where the memory is (a password hidden)."""
    where = f"upstream {settings.upstream_url}, "
    if settings.database_url is not None:
        return where + f"database {redacted(settings.database_url)}"
    where += f"data in {settings.home}"
    if new:
        where += ": a new, empty memory (TENURE_HOME held none)"
    if was is not None:
        where += f"; its server ran on {was} before: set TENURE_DATABASE_URL to serve that"
    return where
