"""`tenure serve [--host] [--port]`: the gateway, the JSON API and the UI in one process."""

from __future__ import annotations

import argparse

from pydantic import ValidationError

from beliefs.model.errors import reason
from proxy.cli import count
from proxy.settings import Settings, SettingsError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the gateway on 127.0.0.1:5757",
        description="Serve the OpenAI/Anthropic-compatible proxy, the JSON API and the UI.",
    )
    parser.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=count(1, 65535), help="port to listen on (default 5757)")
    parser.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        help="what to log (default info: one line per proxied request; TENURE_LOG_LEVEL)",
    )
    parser.add_argument(
        "--log-format",
        choices=("text", "json"),
        help="text (default) or one JSON object per line (TENURE_LOG_FORMAT)",
    )
    parser.add_argument(
        "--workers",
        type=count(1, 64),
        default=1,
        help="gateway processes on the one port (PostgreSQL store only; default 1)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from proxy.cli.server import serve
    from proxy.cli.workers import check_workers

    given = {
        "host": args.host,
        "port": args.port,
        "log_level": args.log_level,
        "log_format": args.log_format,
    }
    overrides = {k: v for k, v in given.items() if v is not None}
    if overrides:
        try:
            settings = Settings.model_validate({**settings.model_dump(), **overrides})
        except ValidationError as exc:
            raise SettingsError(f"bad --host: {reason(exc.errors()[0])}") from None
    check_workers(settings, args.workers)
    serve(settings, workers=args.workers)
    return 0
