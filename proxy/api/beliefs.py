"""The belief API the UI is built on: list and search, create, edit, review, delete and
restore, and the requests a belief was injected into.

Mounted before the gateway's read-only API routes, so `GET /api/beliefs` here (filters plus
`q` and `prefix`) answers in place of the plain list. Every store call runs on the store thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, get_args

from starlette.routing import BaseRoute, Route

from beliefs.model.errors import CanonicalNameClash
from beliefs.model.models import BeliefType, EpistemicStatus, ReviewState
from beliefs.model.record import AnyBelief, as_belief
from beliefs.store.async_store import AsyncStore
from beliefs.store.belief_store import BeliefStore
from beliefs.store.tallies import beliefs_by_ids, scope_counts, user_counts, user_ids
from proxy.api.belief_input import (
    CREATABLE,
    EDITABLE,
    REVIEW_STATES,
    check_fields,
    validated,
    with_expiry,
)
from proxy.api.belief_search import Filters, Found, prefix_search, text_search
from proxy.api.endpoint import endpoint
from proxy.api.query_params import Query, query_flag, query_int
from proxy.errors import ProxyError, bad_field
from proxy.gateway.injections import query_injections

T = TypeVar("T")
_CHOICES: dict[str, tuple[str, ...]] = {
    "type": get_args(BeliefType),
    "status": get_args(EpistemicStatus),
    "review_state": get_args(ReviewState),
}
SEARCH_LIMIT = 50
ID = "belief_id"
PREFIX_LIMIT = 10


def belief_json(belief: AnyBelief) -> dict[str, Any]:
    return as_belief(belief).model_dump(mode="json")


def _choice(query: Query, name: str) -> str | None:
    raw = query.get(name) or None
    if raw is not None and raw not in _CHOICES[name]:
        raise bad_field(name, f"{name}={raw!r}: use one of {', '.join(_CHOICES[name])}")
    return raw


def _filters(params: Query) -> Filters:
    return Filters(
        user_id=params.get("user") or None,
        scope=params.get("scope") or None,
        agent_id=params.get("agent") or None,
        type=_choice(params, "type"),
        status=_choice(params, "status"),
        pinned=query_flag(params, "pinned"),
        review_state=_choice(params, "review_state"),
        include_superseded=bool(query_flag(params, "include_superseded")),
    )


async def _clash_is_409(store: AsyncStore, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    try:
        return await store.apply(fn, *args, **kwargs)
    except CanonicalNameClash as exc:
        raise ProxyError(409, exc.message, type="conflict", param="canonical_name") from None


async def list_beliefs(store: AsyncStore, params: Query) -> list[dict[str, Any]]:
    """List or search beliefs.

    Filters: user, scope, agent, type, status, review_state, pinned, include_superseded,
    include_deleted, limit, offset. `q`: the proxy's retrieval over names, aliases and
    rejected alternatives (each result carries `match.score` and `match.clauses`).
    `q` with `prefix=true`: type-ahead over names (`match.field`, `match.term`).
    `ids=a,b`: exactly those beliefs, in any state.
    """
    filters = _filters(params)
    ids = [i.strip() for i in params.get("ids", "").split(",") if i.strip()]
    if ids:
        return [belief_json(b) for b in await store.apply(beliefs_by_ids, ids)]
    q = params.get("q", "").strip()
    prefix = bool(query_flag(params, "prefix"))
    offset = query_int(params, "offset", 0, low=0) or 0
    if not q:
        beliefs = await store.apply(
            BeliefStore.list,
            user_id=filters.user_id,
            scope=filters.scope,
            agent_id=filters.agent_id,
            type=filters.type,
            status=filters.status,
            pinned=filters.pinned,
            review_state=filters.review_state,
            include_superseded=filters.include_superseded,
            include_deleted=bool(query_flag(params, "include_deleted")),
            with_history=bool(query_flag(params, "with_history")),
            limit=query_int(params, "limit", None, low=1),
            offset=offset,
        )
        return [belief_json(b) for b in beliefs]
    limit = query_int(params, "limit", PREFIX_LIMIT if prefix else SEARCH_LIMIT, low=1) or 1
    users = [filters.user_id] if filters.user_id else await store.apply(user_ids)
    find = prefix_search if prefix else text_search
    found: list[Found] = find(store.index, users, q, filters, offset + limit)
    return [{**belief_json(f.belief), "match": f.match} for f in found[offset : offset + limit]]


async def get_belief(store: AsyncStore, belief_id: str) -> dict[str, Any]:
    return belief_json(await store.get(belief_id))


async def belief_chain(store: AsyncStore, belief_id: str) -> list[dict[str, Any]]:
    return [belief_json(b) for b in await store.chain(belief_id)]


async def belief_history(store: AsyncStore, belief_id: str) -> list[dict[str, Any]]:
    events = await store.history(belief_id)
    return [e.model_dump(mode="json") for e in events]


async def create_belief(
    store: AsyncStore, default_user: str, body: dict[str, Any]
) -> dict[str, Any]:
    """Create a belief written by the operator (source_type operator, review confirmed).

    Body: canonical_name (required), content, why_it_matters, aliases, rejected_alternatives,
    scope, type, subtype, epistemic_status, confidence, pinned, delivery, user_id, agent_id,
    participants, expires_in_days (a positive number: it stops being delivered that many days
    from now).
    """
    body = with_expiry(check_fields(body, CREATABLE))
    if "canonical_name" not in body:
        raise bad_field("canonical_name", "canonical_name is required: name the belief")
    data = {
        "user_id": default_user,
        **body,
        "source_type": "operator",
        "review_state": "confirmed",
        "user_edited": True,
    }
    belief = validated(data)
    created = await _clash_is_409(store, BeliefStore.create, belief, actor="operator")
    return belief_json(created)


async def patch_belief(store: AsyncStore, belief_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """Edit fields: content, canonical_name, aliases, rejected_alternatives, why_it_matters,
    scope, epistemic_status, pinned, delivery, expires_in_days (null clears the expiry). One
    history event per call (user_edited, except for a pin alone)."""
    body = check_fields(body, EDITABLE)
    if not body:
        raise bad_field("body", f"nothing to change; send any of {', '.join(EDITABLE)}")
    body = with_expiry(body)
    old = await store.get(belief_id)
    validated({**old.model_dump(exclude={"change_log"}), **body})
    event, changes = "user_correction", {**body, "user_edited": True}
    if set(body) == {"pinned"}:  # a pin changes delivery, not what the belief says
        event, changes = ("pinned" if body["pinned"] else "unpinned"), body
    updated = await _clash_is_409(
        store, BeliefStore.update, belief_id, changes, actor="operator", event=event
    )
    return belief_json(updated)


async def delete_belief(store: AsyncStore, belief_id: str) -> dict[str, Any]:
    """Soft delete: the belief stops being delivered and is hidden; `undo` restores it."""
    deleted = await store.apply(BeliefStore.soft_delete, belief_id)
    undo = {"method": "POST", "path": f"/api/beliefs/{belief_id}/restore"}
    return {"belief": belief_json(deleted), "undo": undo}


async def restore_belief(store: AsyncStore, belief_id: str) -> dict[str, Any]:
    """Undo a soft delete (409 if a live belief took its name meanwhile)."""
    return belief_json(await _clash_is_409(store, BeliefStore.restore, belief_id))


async def review_belief(store: AsyncStore, belief_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """Body `{"state": "confirmed" | "rejected" | "pending"}`; rejected stops delivery, never
    deletes."""
    body = check_fields(body, {"state": "str"})
    state = body.get("state")
    if state not in REVIEW_STATES:
        raise bad_field("state", f"state={state!r}: use one of {', '.join(REVIEW_STATES)}")
    return belief_json(await store.apply(BeliefStore.set_review, belief_id, state))


async def belief_injections(
    store: AsyncStore, belief_id: str, params: Query
) -> list[dict[str, Any]]:
    """The requests the belief was injected into, newest first (`limit`, default 50)."""
    limit = query_int(params, "limit", 50, low=1) or 50

    def read(store: BeliefStore) -> list[dict[str, Any]]:
        store.get(belief_id)  # 404 for an unknown id
        return [r.as_json() for r in query_injections(store, belief_id=belief_id, limit=limit)]

    return await store.apply(read)


async def facets(store: AsyncStore, params: Query) -> dict[str, Any]:
    """Counts of live beliefs per scope (total, pinned, pending) and per user (`user` narrows
    the scope counts)."""
    user = params.get("user") or None

    def read(store: BeliefStore) -> dict[str, Any]:
        return {
            "scopes": [
                {"scope": c.scope, "count": c.count, "pinned": c.pinned, "pending": c.pending}
                for c in scope_counts(store, user)
            ],
            "users": [{"user_id": u, "count": n} for u, n in user_counts(store)],
        }

    return await store.apply(read)


def belief_routes(store: AsyncStore, default_user: str) -> list[BaseRoute]:
    """Mount before the gateway's API routes (its list and catch-all)."""
    return [
        Route(
            "/api/beliefs",
            endpoint(list_beliefs, store, query=True, clients=store),
            methods=["GET"],
        ),
        Route(
            "/api/beliefs",
            endpoint(create_belief, store, default_user, body=True, status=201),
            methods=["POST"],
        ),
        Route("/api/facets", endpoint(facets, store, query=True), methods=["GET"]),
        Route(
            "/api/beliefs/{belief_id}",
            endpoint(get_belief, store, path=ID, clients=store),
            methods=["GET"],
        ),
        Route(
            "/api/beliefs/{belief_id}/chain",
            endpoint(belief_chain, store, path=ID, clients=store),
            methods=["GET"],
        ),
        Route(
            "/api/beliefs/{belief_id}/history",
            endpoint(belief_history, store, path=ID, clients=store),
            methods=["GET"],
        ),
        Route(
            "/api/beliefs/{belief_id}",
            endpoint(patch_belief, store, path=ID, body=True, clients=store),
            methods=["PATCH"],
        ),
        Route(
            "/api/beliefs/{belief_id}",
            endpoint(delete_belief, store, path=ID, clients=store),
            methods=["DELETE"],
        ),
        Route(
            "/api/beliefs/{belief_id}/restore",
            endpoint(restore_belief, store, path=ID, clients=store),
            methods=["POST"],
        ),
        Route(
            "/api/beliefs/{belief_id}/review",
            endpoint(review_belief, store, path=ID, body=True, clients=store),
            methods=["POST"],
        ),
        Route(
            "/api/beliefs/{belief_id}/injections",
            endpoint(belief_injections, store, path=ID, query=True),
            methods=["GET"],
        ),
    ]
