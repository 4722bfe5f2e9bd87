"""One backend per command, chosen once: the home's own database, or — while a server holds
it — that server's API, and only a server that answers with this home's id."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from beliefs.model.errors import BeliefError, StoreLocked
from proxy.cli.api_client import ApiClient, ServerUnreachable
from proxy.cli.home_record import home_id, read_database, read_server
from proxy.settings import Settings

if TYPE_CHECKING:  # imported by `open_store`: a command that a running server answers never does
    from beliefs.store.belief_store import BeliefStore

T = TypeVar("T")

__all__ = ["check_home", "open_store", "server_for_home", "with_backend"]


def check_home(settings: Settings, *, create: bool = False) -> None:
    """Refuse a home that holds no memory, before anything is opened or created in it.

    Raises:
        BeliefError: the home does not exist (a mistyped TENURE_HOME would otherwise start
            a new, empty memory), or the home's server runs on PostgreSQL and this shell has
            no TENURE_DATABASE_URL.
    """
    if settings.database_url is not None:
        return
    recorded = read_database(settings.home)
    if recorded is not None:
        raise BeliefError(
            f"the memory of {settings.home} is in PostgreSQL ({recorded}), where its server "
            "runs: set TENURE_DATABASE_URL to that database in this shell too"
        )
    if not create and not settings.home.exists():
        raise BeliefError(
            f"no Tenure home at {settings.home} (TENURE_HOME): check the path; `tenure serve` "
            "or `tenure import` starts a new memory there"
        )


def open_store(
    settings: Settings, *, read_only: bool = False, create: bool = False, indexed: bool = True
) -> BeliefStore:
    """Raises:
    StoreLocked: another process holds the database.
    BeliefError: the home holds no memory and `create` is not set (see `check_home`).

    Without `indexed` (commands that only write rows, such as an import) the beliefs are not
    read into memory; on PostgreSQL they always are.
    """
    from beliefs.opening import open_store as open_belief_store

    check_home(settings, create=create)
    if not read_only:
        settings.home.mkdir(parents=True, exist_ok=True)
    return open_belief_store(settings.store_location, read_only=read_only, background=not indexed)


def with_backend(
    settings: Settings,
    local: Callable[[BeliefStore], T],
    remote: Callable[[ApiClient], T] | str,
    *,
    read_only: bool = False,
    create: bool = False,
    timeout: float = 30.0,
    indexed: bool = True,
) -> T:
    """Run `local` on the database, or `remote` on the server that holds it.

    `remote` may instead say why the command cannot go through a server; `indexed` is
    `open_store`'s.

    Raises:
        BeliefError: the database is held and no server of this home can be used.
    """
    if not isinstance(remote, str) and settings.database_url is None:
        # A live server of this home holds its DuckDB file: asked first, it spares the command
        # the store's imports and an open that would only find the file held.
        server = _running_server(settings, timeout)
        if server is not None:
            return remote(server)
    try:
        store = open_store(settings, read_only=read_only, create=create, indexed=indexed)
    except StoreLocked as locked:
        if isinstance(remote, str):
            raise BeliefError(f"{_held_by(locked)}; {remote}") from None
        return remote(server_for_home(settings, locked, timeout=timeout))
    with store:
        return local(store)


def server_for_home(settings: Settings, locked: StoreLocked, *, timeout: float = 30.0) -> ApiClient:
    """The API of the server recorded in this home, after it proves it serves this home.

    Raises:
        BeliefError: no server is recorded, it does not answer, or it serves another home.
    """
    held = _held_by(locked)
    record = read_server(settings.home)
    if record is None:
        raise BeliefError(
            f"{held}, and no Tenure server is recorded in {settings.home}; stop that process "
            "and run the command again"
        )
    client = ApiClient(record.url, api_key=settings.api_key or settings.token, timeout=timeout)
    try:
        info = client.get("/api/server")
    except ServerUnreachable as exc:
        raise BeliefError(
            f"{held}; the server recorded for this home (pid {record.pid}, {record.url}) does "
            f"not answer: {exc.message}. Stop that process and run the command again"
        ) from None
    except BeliefError as exc:
        raise BeliefError(f"{held}; the server at {record.url} refused: {exc.message}") from None
    if not isinstance(info, dict) or info.get("home_id") != home_id(settings.home):
        other = info.get("home", "another home") if isinstance(info, dict) else "another home"
        raise BeliefError(
            f"{held}; the server at {record.url} serves {other}, not {settings.home}, so it "
            "is not used. Stop the process holding this home's database and run the command "
            "again"
        )
    print(
        f"note: server running at {client.base}; using its API "
        f"(home {settings.home}, server pid {info.get('pid', record.pid)})",
        file=sys.stderr,
    )
    return client


def _running_server(settings: Settings, timeout: float) -> ApiClient | None:
    """The home's recorded server when its process is alive and it proves to serve this home;
    None otherwise (the database is then opened, and a failure there says what is wrong)."""
    record = read_server(settings.home)
    if record is None:
        return None
    try:
        os.kill(record.pid, 0)
    except ProcessLookupError:
        return None  # a record a killed server left
    except PermissionError:
        pass  # alive, another user's
    held = StoreLocked(f"the belief database {settings.db_path} is held by process {record.pid}")
    try:
        return server_for_home(settings, held, timeout=min(timeout, 5.0))
    except BeliefError:
        return None


def _held_by(locked: StoreLocked) -> str:
    """The first clause of the lock error: which database, held by which process."""
    return locked.message.split("; ", 1)[0]
