"""`/api/tokens`: the operator makes, lists and revokes access tokens (what `tenure tokens`
calls while the server holds the database). A change applies to this server at once."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from beliefs.store.async_store import AsyncStore
from proxy.api.belief_input import read_json
from proxy.errors import bad_field
from proxy.security.tokens import TokenBook, create_token, list_tokens, revoke_token


def _strings(body: dict[str, Any], name: str) -> list[str]:
    value = body.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise bad_field(name, f'{name} must be a list of strings, e.g. ["project:*"]')
    return value


class TokenApi:
    """The tokens in the store, and the book the access middleware checks requests against."""

    def __init__(self, store: AsyncStore, book: TokenBook) -> None:
        self.store = store
        self.book = book

    async def list_access_tokens(self, request: Request) -> Response:
        """Every token, revoked ones too (never the token itself)."""
        return JSONResponse([t.as_json() for t in await self.store.apply(list_tokens)])

    async def create_access_token(self, request: Request) -> Response:
        """Body: `user` (or `operator: true`), `agents`, `scopes` (patterns such as `project:*`).
        The answer's `token` is shown this once; only its hash is kept."""
        body = await read_json(request)
        user, operator = body.get("user"), body.get("operator", False)
        if user is not None and not isinstance(user, str):
            raise bad_field("user", "user must be a string")
        if not isinstance(operator, bool):
            raise bad_field("operator", "operator must be true or false")
        token, text = await self.store.apply(
            create_token,
            user=user,
            agents=_strings(body, "agents"),
            scopes=_strings(body, "scopes"),
            operator=operator,
        )
        self.book.put(token)
        return JSONResponse({**token.as_json(), "token": text}, status_code=201)

    async def revoke_access_token(self, request: Request) -> Response:
        """Revoke a token: it is refused from the next request on."""
        token = await self.store.apply(revoke_token, request.path_params["token_id"])
        self.book.put(token)
        return JSONResponse(token.as_json())


def token_routes(store: AsyncStore, book: TokenBook) -> list[BaseRoute]:
    """Mount before the API's catch-all; the operator's only (never `open_to_clients`)."""
    api = TokenApi(store, book)
    return [
        Route("/api/tokens", api.list_access_tokens, methods=["GET"]),
        Route("/api/tokens", api.create_access_token, methods=["POST"]),
        Route("/api/tokens/{token_id}", api.revoke_access_token, methods=["DELETE"]),
    ]
