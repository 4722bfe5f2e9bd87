"""Every other upstream path (models, embeddings, completions, responses …), passed through
byte for byte; `GET models` also lists the LiteLLM-routed model names when there are any."""

from __future__ import annotations

import json

from starlette.types import Receive, Scope, Send

from proxy.errors import ProxyError
from proxy.gateway.forward import (
    Header,
    Upstream,
    UpstreamBroke,
    exchange,
    open_upstream,
    response_headers,
    upstream_headers,
    with_query,
)
from proxy.gateway.parts import Gateway
from proxy.gateway.replies import send_bytes
from proxy.gateway.request_body import read_body
from proxy.scopes import grant_of

# TRACE echoes the request (the upstream key included) back; CONNECT would open a tunnel.
_NOT_FORWARDED = frozenset({"TRACE", "CONNECT"})


async def handle_passthrough(
    gw: Gateway, upstream: Upstream, rest: str, scope: Scope, receive: Receive, send: Send
) -> None:
    """Forward `<method> <upstream>/<rest>?<query>` and relay the reply; `upstream`: where
    the path's protocol goes (the route table picks it)."""
    settings = gw.settings
    method: str = scope["method"]
    if method.upper() in _NOT_FORWARDED:
        raise ProxyError(
            405,
            f"{method} is not forwarded: the provider would echo the request back, with the "
            "upstream credentials; use GET, POST or another method the API defines",
            code="method_not_allowed",
        )
    body = await read_body(scope, receive, settings.max_body_bytes)
    url = with_query(f"{upstream.base}/{rest}", scope)
    headers = upstream_headers(
        scope["headers"],
        api_key=upstream.key,
        bearer=upstream.bearer,
        forward_credentials=grant_of(scope) is None,  # else the credential is ours
    )
    extra: list[Header] = []
    if method == "GET" and rest == "models" and settings.models:
        await _models_with_routes(gw, url, headers, extra, send)
        return
    outcome = await exchange(
        gw.upstream,
        method,
        url,
        headers=headers,
        body=body if body or method not in ("GET", "HEAD") else None,
        receive=receive,
        send=send,
        extra_headers=extra,
    )
    if outcome.status >= 400:
        gw.counters.upstream_errors += 1
    if outcome.disconnected:
        gw.counters.client_disconnects += 1
    if outcome.broken:
        gw.counters.upstream_broken_streams += 1
        raise UpstreamBroke(outcome.broken)


async def _models_with_routes(
    gw: Gateway, url: str, headers: list[tuple[str, str]], extra: list[Header], send: Send
) -> None:
    resp = await open_upstream(gw.upstream, "GET", url, headers, None)
    async with resp:
        raw = await resp.read()
        names = list(gw.settings.models)
        if resp.status != 200 or resp.headers.get("content-encoding"):
            await send(
                {
                    "type": "http.response.start",
                    "status": resp.status,
                    "headers": response_headers(resp, extra),
                }
            )
            await send({"type": "http.response.body", "body": raw, "more_body": False})
            return
    try:
        listing = json.loads(raw)
        data = listing["data"]
    except (ValueError, KeyError, TypeError):
        listing, data = {"object": "list", "data": []}, []
    known = {m.get("id") for m in data if isinstance(m, dict)}
    data.extend(
        {"id": name, "object": "model", "created": 0, "owned_by": "tenure"}
        for name in names
        if name not in known
    )
    listing["data"] = data
    await send_bytes(send, 200, json.dumps(listing).encode(), headers=extra)
