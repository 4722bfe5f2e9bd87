"""`/api/tokens`: the operator makes, lists and revokes access tokens (what `tenure tokens`
calls while the server holds the database). A change applies to this server at once."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from proxy.api.belief_input import read_json
from proxy.errors import bad_field
from proxy.runtime import runtime_of
from proxy.security.tokens import TokenBook, create_token, list_tokens, revoke_token


def _strings(body: dict[str, Any], name: str) -> list[str]:
    value = body.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise bad_field(name, f'{name} must be a list of strings, e.g. ["project:*"]')
    return value


async def list_access_tokens(request: Request) -> Response:
    """Every token, revoked ones too (never the token itself)."""
    rt = runtime_of(request)
    return JSONResponse([t.as_json() for t in await rt.thread.run(list_tokens, rt.store)])


async def create_access_token(request: Request) -> Response:
    """Body: `user` (or `operator: true`), `agents`, `scopes` (patterns such as `project:*`).
    The answer's `token` is shown this once; only its hash is kept."""
    rt = runtime_of(request)
    body = await read_json(request)
    user, operator = body.get("user"), body.get("operator", False)
    if user is not None and not isinstance(user, str):
        raise bad_field("user", "user must be a string")
    if not isinstance(operator, bool):
        raise bad_field("operator", "operator must be true or false")
    token, text = await rt.thread.run(
        create_token,
        rt.store,
        user=user,
        agents=_strings(body, "agents"),
        scopes=_strings(body, "scopes"),
        operator=operator,
    )
    book: TokenBook = request.app.state.tokens
    book.put(token)
    return JSONResponse({**token.as_json(), "token": text}, status_code=201)


async def revoke_access_token(request: Request) -> Response:
    """Revoke a token: it is refused from the next request on."""
    rt = runtime_of(request)
    token = await rt.thread.run(revoke_token, rt.store, request.path_params["token_id"])
    book: TokenBook = request.app.state.tokens
    book.put(token)
    return JSONResponse(token.as_json())


def token_routes() -> list[BaseRoute]:
    """Mount before the API's catch-all; the operator's only (never `open_to_clients`)."""
    return [
        Route("/api/tokens", list_access_tokens, methods=["GET"]),
        Route("/api/tokens", create_access_token, methods=["POST"]),
        Route("/api/tokens/{token_id}", revoke_access_token, methods=["DELETE"]),
    ]
