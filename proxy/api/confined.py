"""The API as a client token sees it: its user's memory only (and only its agents and scope
patterns). The operations themselves know nothing of tokens; the endpoint holds their inputs
and outputs to the request's grant here."""

from __future__ import annotations

from typing import Any

from beliefs.model.errors import BeliefNotFound
from beliefs.store.async_store import AsyncStore
from proxy.api.query_params import Query
from proxy.security.grants import Grant


def confined_query(grant: Grant, params: Query) -> dict[str, str]:
    """The query with the token's user (403 when it names another), no agent outside the
    token's and no scope outside its patterns (403 otherwise).

    Raises:
        ProxyError: 403 naming the parameter.
    """
    out = dict(params)
    out["user"] = grant.user(params.get("user") or None, "user") or ""
    if params.get("agent"):  # none named: every agent's, then `within` keeps the token's
        grant.agent(params["agent"], "agent")
    scopes = [s.strip().lower() for s in params.get("scope", "").split(",") if s.strip()]
    grant.check_scopes(scopes, "scope")
    return out


def confined_body(grant: Grant, body: dict[str, Any]) -> dict[str, Any]:
    """Raises:
    ProxyError: 403 when the body names another user or agent, or a scope outside the token's.
    """
    if "user_id" in body:
        grant.user(body["user_id"] if isinstance(body["user_id"], str) else None, "user_id")
    if isinstance(body.get("agent_id"), str):
        grant.agent(body["agent_id"], "agent_id")
    scope = body.get("scope")
    if isinstance(scope, list):
        grant.check_scopes([s for s in scope if isinstance(s, str)], "scope")
    return body


async def check_belief(store: AsyncStore, grant: Grant, belief_id: str) -> None:
    """Raises:
    BeliefNotFound: the belief is another user's (or outside the token's agents and scopes):
        answered as for an unknown id, so a token learns nothing of other users' ids.
    """
    belief = await store.get(belief_id)
    if not grant.sees(belief.user_id, belief.agent_id, belief.scope):
        raise BeliefNotFound(f"no belief with id {belief_id!r}; `tenure beliefs list` shows ids")


def within(grant: Grant, data: Any) -> Any:
    """The answer without the beliefs out of the token's reach (lists of beliefs, and the
    lists inside an answer object, such as recall's `hits`)."""
    if isinstance(data, list):
        return [within(grant, item) for item in data if grant.sees_json(item)]
    if isinstance(data, dict):
        return {key: within(grant, value) for key, value in data.items()}
    return data
