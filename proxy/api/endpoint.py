"""An API operation served as a route.

The operations take the runtime and plain values (a path id, the query, the JSON body) and
return JSON data, raising `ProxyError` or `BeliefError`; the UI's pages call the same
functions directly. `endpoint` reads those values from the request and answers with the data.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from proxy.api.belief_input import read_json
from proxy.runtime import runtime_of

Operation = Callable[..., Awaitable[Any]]
Endpoint = Callable[[Request], Awaitable[Response]]


def endpoint(
    operation: Operation,
    *,
    path: str | None = None,
    query: bool = False,
    body: bool = False,
    status: int = 200,
) -> Endpoint:
    """The route for `operation(runtime, [path id], [query], [body])`: `path` names the path
    parameter it takes; a `status` of 204 answers with no body."""

    async def serve(request: Request) -> Response:
        args: list[Any] = [runtime_of(request)]
        if path is not None:
            args.append(request.path_params[path])
        if query:
            args.append(request.query_params)
        if body:
            args.append(await read_json(request))
        data = await operation(*args)
        if status == 204:
            return Response(status_code=204)
        return JSONResponse(data, status_code=status)

    # The OpenAPI document names and describes each endpoint by these.
    serve.__name__, serve.__doc__ = operation.__name__, operation.__doc__
    return serve
