"""Log output of `tenure serve`: one handler on stderr, plain text or one JSON object per line,
one access line per proxied request, and LiteLLM's own loggers silent unless asked."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import TextIO

from proxy.settings import Settings

__all__ = ["ACCESS_FIELDS", "LITELLM_LOGGERS", "JsonFormatter", "configure_logging"]

# LiteLLM logs each model call through these, with a handler of its own: left to propagate,
# every line would appear twice.
LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")
# The fields of an access line, as attributes of its log record (and keys of its JSON).
ACCESS_FIELDS = ("method", "path", "status", "ms", "user", "injected", "request_id")
MCP_SESSION_LOGGER = "mcp.server.streamable_http"
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """`{"time", "level", "logger", "message", ...access fields, "error"?}` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in ACCESS_FIELDS:
            if hasattr(record, name):
                data[name] = getattr(record, name)
        if record.exc_info:
            data["error"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False, default=str)


class _SessionEnds(logging.Filter):
    """Drops the MCP SDK's "Terminating session: …" line, logged at INFO after every call on
    a stateless connection: one line of noise per tool call, saying nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Terminating session:")


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to the standard error of the moment a line is logged, not of the moment the
    handler was made: a host that swaps it (a test runner capturing each test's output, an
    embedding application) would otherwise leave every later line on a closed stream."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)  # not StreamHandler's: it would set the stream

    @property
    def stream(self) -> TextIO:
        return sys.stderr


def configure_logging(settings: Settings) -> None:
    """Route every logger (ours, uvicorn's) through one stderr handler at the set level."""
    handler = _Stderr()
    json_logs = settings.log_format == "json"
    handler.setFormatter(JsonFormatter() if json_logs else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    # psycopg's pool warns at every reconnect attempt while PostgreSQL is away; the writer and
    # the change feed say so once each, and again when it is back.
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
    session_log = logging.getLogger(MCP_SESSION_LOGGER)
    if not any(isinstance(f, _SessionEnds) for f in session_log.filters):
        session_log.addFilter(_SessionEnds())
    quiet = settings.litellm_log_level == "off"
    for name in LITELLM_LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(logging.CRITICAL + 1 if quiet else settings.litellm_log_level.upper())
        logger.propagate = False  # when asked for, its lines come from its own handler, once
