"""Reading query parameters of the JSON API (from a request, or from a page that calls an
operation directly): flags and whole numbers, with a 400 naming them."""

from __future__ import annotations

from collections.abc import Mapping

from proxy.errors import bad_field

Query = Mapping[str, str]  # the query parameters an operation reads

BOOLEANS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def query_flag(query: Query, name: str) -> bool | None:
    """`true`/`false` (also 1/0, yes/no); None when absent or empty.

    Raises:
        ProxyError: 400 naming the parameter for anything else.
    """
    raw = query.get(name)
    if raw is None or raw == "":
        return None
    try:
        return BOOLEANS[raw.lower()]
    except KeyError:
        raise bad_field(name, f"{name}={raw!r}: use true or false") from None


MAX_INT = 2**31 - 1  # larger counts and offsets mean nothing here


def query_int(
    query: Query,
    name: str,
    default: int | None,
    *,
    low: int = 0,
    high: int = MAX_INT,
    empty_ok: bool = True,
) -> int | None:
    """A whole number from `low` to `high` (ASCII digits only); `default` when absent, and when
    empty if `empty_ok`.

    Raises:
        ProxyError: 400 naming the parameter for anything else.
    """
    raw = query.get(name)
    if raw is None or (raw == "" and empty_ok):
        return default
    # isdigit() alone takes "²" and other digits int() refuses; long strings cost to convert.
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 10 and low <= int(raw) <= high):
        hint = f"from {low} to {high}" if high != MAX_INT else f">= {low}"
        raise bad_field(name, f"{name}={raw!r}: use a whole number {hint}")
    return int(raw)
