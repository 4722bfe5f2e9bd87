"""How the pages get their data: they call the JSON API's own operations (`proxy/api`), and a
refusal comes back as the error the API would answer, for the page to show beside its form."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from beliefs.model.errors import BeliefError
from proxy.api.endpoint import Operation
from proxy.errors import ProxyError, as_proxy_error

log = logging.getLogger("tenure.ui")


@dataclass(frozen=True)
class Outcome:
    """An operation's data, or the error it raised."""

    data: Any = None
    error: ProxyError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def status(self) -> int:
        return 200 if self.error is None else self.error.status

    @property
    def message(self) -> str:
        return "" if self.error is None else self.error.message

    @property
    def field(self) -> str | None:
        return None if self.error is None else self.error.param


async def attempt(operation: Operation, *args: Any) -> Outcome:
    """`operation(*args)`'s data, or its error (logged when it is not one we raised)."""
    try:
        return Outcome(await operation(*args))
    except (ProxyError, BeliefError) as exc:
        return Outcome(error=as_proxy_error(exc))
    except Exception as exc:
        log.exception("UI call %s failed", getattr(operation, "__name__", operation))
        return Outcome(error=as_proxy_error(exc))


def query(**params: Any) -> dict[str, str]:
    """Query parameters as the API reads them: None and "" left out, flags as true/false."""
    return {
        name: ("true" if value is True else "false" if value is False else str(value))
        for name, value in params.items()
        if value is not None and value != ""
    }
