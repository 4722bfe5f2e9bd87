"""Reading query parameters of the JSON API: flags and whole numbers, with a 400 naming them."""

from __future__ import annotations

from starlette.requests import Request

from proxy.errors import bad_field

BOOLEANS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def query_flag(request: Request, name: str) -> bool | None:
    """`true`/`false` (also 1/0, yes/no); None when absent or empty.

    Raises:
        ProxyError: 400 naming the parameter for anything else.
    """
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    try:
        return BOOLEANS[raw.lower()]
    except KeyError:
        raise bad_field(name, f"{name}={raw!r}: use true or false") from None


def query_int(request: Request, name: str, default: int | None, *, low: int = 0) -> int | None:
    """A whole number >= `low`; `default` when absent or empty.

    Raises:
        ProxyError: 400 naming the parameter for anything else.
    """
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if not raw.isdigit() or int(raw) < low:
        raise bad_field(name, f"{name}={raw!r}: use a whole number >= {low}")
    return int(raw)
