"""Models on providers that are not OpenAI-compatible, served through LiteLLM.

LiteLLM comes from the extractor's LLM boundary, the one module that imports it: in a thread
at start-up, so the first routed request never waits for the import on the event loop (it
costs seconds and ~200 MB). The protocol adapter's `Translation` names the LiteLLM call and
turns its streamed events back into the protocol's bytes; a whole reply goes back as the
object LiteLLM returned, with the client's model name.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.types import Send

from extractor.llm import litellm_module
from proxy.errors import ProxyError
from proxy.gateway.forward import Exchange, Header
from proxy.gateway.protocols.base import Translation
from proxy.gateway.replies import SSE, send_bytes
from proxy.settings import ModelRoute

log = logging.getLogger("tenure.proxy")

# Fields of the request that LiteLLM takes as its own arguments.
_OWN = ("model", "messages", "input", "stream")


async def litellm_exchange(
    route: ModelRoute,
    translation: Translation,
    body: dict[str, Any],
    *,
    api_key: str | None,
    send: Send,
    extra_headers: list[Header],
    capture: bool = False,
    before_end: Callable[[Exchange], Awaitable[None]] | None = None,
) -> Exchange:
    """Answer `body` through LiteLLM and send the reply in the protocol's wire format;
    `api_key` is the route's key, else the client's own.

    Raises:
        ProxyError: the provider failed before the reply started (its status when it gave one,
            else 502, or 504 on a timeout).
    """
    litellm = await litellm_module()  # lazy and off the loop: only routed models pay for it

    stream = body.get("stream") is True
    kwargs = {k: v for k, v in body.items() if k not in _OWN}
    if route.api_base:
        kwargs["api_base"] = route.api_base
    if api_key:
        kwargs["api_key"] = api_key
    try:
        response = await translation.call(litellm, route.litellm_model, body, stream, **kwargs)
    except Exception as exc:
        raise _provider_error(route, exc) from None
    outcome = Exchange(status=200, content_type="application/json", chunks=[] if capture else None)
    captured = outcome.chunks
    if not stream:
        payload = response.model_dump(exclude_none=True)
        payload["model"] = body["model"]
        data = json.dumps(payload).encode()
        if captured is not None:
            captured.append(data)
        if before_end is not None:
            await before_end(outcome)
        await send_bytes(send, 200, data, headers=extra_headers)
        outcome.completed = True
        return outcome
    outcome.content_type = "text/event-stream"
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", SSE), (b"cache-control", b"no-cache"), *extra_headers],
        }
    )
    try:
        async for chunk in response:
            data = translation.event(chunk.model_dump(exclude_none=True), body["model"])
            if captured is not None:
                captured.append(data)
            await send({"type": "http.response.body", "body": data, "more_body": True})
    except Exception as exc:
        outcome.broken = f"{route.litellm_model} failed mid-stream: {type(exc).__name__}: {exc}"
        return outcome
    if before_end is not None:
        await before_end(outcome)
    if translation.end:
        await send({"type": "http.response.body", "body": translation.end, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})
    outcome.completed = True
    return outcome


def _provider_error(route: ModelRoute, exc: Exception) -> ProxyError:
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__
    message = f"{route.litellm_model}: {name}: {getattr(exc, 'message', None) or exc}"
    if "Timeout" in name:
        return ProxyError(504, message, type="upstream_timeout", code="upstream_timeout")
    if isinstance(status, int) and 400 <= status < 600 and "Connection" not in name:
        return ProxyError(status, message, type="upstream_error", code=name)
    return ProxyError(502, message, type="upstream_unreachable", code="upstream_unreachable")
