"""An API operation served as a route.

The operations take their collaborators (the store, the job queue, a default user…) and plain
values (a path id, the query, the JSON body) and return JSON data, raising `ProxyError` or
`BeliefError`; the UI's pages call the same functions directly. `endpoint` reads those values
from the request and answers with the data.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from beliefs.store.async_store import AsyncStore
from proxy.api.belief_input import read_json
from proxy.api.confined import check_belief, confined_body, confined_query, within
from proxy.scopes import client_grant, open_to_clients

Operation = Callable[..., Awaitable[Any]]
Endpoint = Callable[[Request], Awaitable[Response]]


def endpoint(
    operation: Operation,
    *collaborators: Any,
    path: str | None = None,
    query: bool = False,
    body: bool = False,
    status: int = 200,
    clients: AsyncStore | None = None,
) -> Endpoint:
    """The route for `operation(*collaborators, [path id], [query], [body])`: `path` names the
    path parameter it takes (a belief id when `clients`); a `status` of 204 answers with no
    body. With `clients` (the store its beliefs are in), a client token may call it, held to
    its own user's beliefs."""

    async def serve(request: Request) -> Response:
        grant = client_grant(request.scope) if clients is not None else None
        args: list[Any] = list(collaborators)
        if path is not None:
            args.append(request.path_params[path])
            if grant is not None and clients is not None:
                await check_belief(clients, grant, request.path_params[path])
        if query:
            params = request.query_params
            args.append(params if grant is None else confined_query(grant, params))
        if body:
            data = await read_json(request)
            args.append(data if grant is None else confined_body(grant, data))
        result = await operation(*args)
        if status == 204:
            return Response(status_code=204)
        return JSONResponse(result if grant is None else within(grant, result), status_code=status)

    # The OpenAPI document names and describes each endpoint by these.
    serve.__name__, serve.__doc__ = operation.__name__, operation.__doc__
    return open_to_clients(serve) if clients is not None else serve
