"""Running the gateway: one uvicorn process serving the proxy, the API and the UI."""

from __future__ import annotations

import logging
import sys

from beliefs.store import BeliefStore
from proxy.app import create_app
from proxy.auth import is_loopback
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


def serve(settings: Settings) -> None:
    """Open the store, then serve until interrupted.

    Raises:
        SettingsError: the bind address is refused.
        StoreLocked: another process holds the database.
    """
    import uvicorn  # the server is only needed by `tenure serve`

    check_bind(settings.host, settings.api_key)
    # The store thread holds the GIL in short bursts; let the event loop take it back sooner
    # than the default 5 ms so those bursts do not show up in the proxy's tail latency.
    sys.setswitchinterval(0.001)
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    settings.home.mkdir(parents=True, exist_ok=True)
    store = BeliefStore.open(settings.db_path)
    print(
        f"tenure: serving on http://{settings.host}:{settings.port}/v1 "
        f"(upstream {settings.upstream_url}, data in {settings.home})",
        file=sys.stderr,
    )
    try:
        config = uvicorn.Config(
            create_app(settings, store=store),
            host=settings.host,
            port=settings.port,
            log_level=settings.log_level,
            access_log=settings.log_level == "debug",
            server_header=False,
            proxy_headers=False,  # nothing reads the client address; skip the header rewrite
            date_header=False,
            lifespan="on",
        )
        uvicorn.Server(config).run()
    finally:
        store.close()
