"""Compaction and persona API: `POST /api/compaction/run`, `GET /api/compaction/runs`,
`GET/PUT /api/persona?user=` and `POST /api/persona/regenerate?user=`."""

from __future__ import annotations

from typing import Any

from starlette.routing import BaseRoute, Route

from beliefs.context.assembly import MAX_PERSONA_CHARS
from beliefs.model.models import SCOPE_PATTERN
from beliefs.model.persona import Persona
from beliefs.store.async_store import AsyncStore
from beliefs.store.belief_store import BeliefStore
from compaction import CompactionScheduler, Compactor, PersonaKeeper, list_runs
from compaction.persona import deterministic_text, inputs_hash, persona_inputs
from proxy.api.endpoint import endpoint
from proxy.api.query_params import BOOLEANS, Query, query_int
from proxy.errors import ProxyError, bad_field
from proxy.gateway.identity import MAX_ID_CHARS


def _option(params: Query, body: dict[str, Any], name: str) -> Any:
    return body.get(name, params.get(name))


def _flag(params: Query, body: dict[str, Any], name: str) -> bool:
    value = _option(params, body, name)
    if value is None or isinstance(value, bool):
        return bool(value)
    if str(value).lower() in BOOLEANS:
        return BOOLEANS[str(value).lower()]
    raise bad_field(name, f"{name}={value!r}: use true or false")


RUN_FIELDS = ("user", "scope", "dry_run", "force")


def _checked_user(user: str) -> str:
    """A user id the store can hold (the gateway's limit for ids)."""
    if not 1 <= len(user) <= MAX_ID_CHARS:
        raise bad_field("user", f"user is {len(user)} characters; use 1 to {MAX_ID_CHARS}")
    return user


def _user(default_user: str, params: Query) -> str:
    return _checked_user(params.get("user") or default_user)


def _known_fields(body: dict[str, Any], accepted: tuple[str, ...]) -> None:
    """A typo (`dryrun`) must not be ignored: on a run it would mean a real compaction."""
    for name in body:
        if name not in accepted:
            raise bad_field(name, f"unknown field {name!r}; accepted: {', '.join(accepted)}")


async def run_compaction(
    compactor: Compactor, params: Query, body: dict[str, Any]
) -> dict[str, Any]:
    """Body or query: user, scope, dry_run, force. 409 while a run is in progress."""
    _known_fields(body, RUN_FIELDS)
    user, scope = _option(params, body, "user"), _option(params, body, "scope")
    for name, value in (("user", user), ("scope", scope)):
        if value is not None and not isinstance(value, str):
            raise bad_field(name, f"{name} must be a string")
    if user is not None:
        _checked_user(user)
    scope = scope.strip().lower() if scope else None
    if scope is not None and not SCOPE_PATTERN.match(scope):
        raise bad_field(
            "scope", f"scope {scope!r} is not user:universal, domain:<slug> or project:<slug>"
        )
    report = await compactor.run(
        user_id=user,
        scope=scope,
        dry_run=_flag(params, body, "dry_run"),
        force=_flag(params, body, "force"),
        trigger="api",
    )
    return report.model_dump(mode="json")


async def compaction_runs(
    store: AsyncStore, scheduler: CompactionScheduler, params: Query
) -> dict[str, Any]:
    """Newest first; `?user=`, `?limit=` (1-200, default 20)."""
    limit = query_int(params, "limit", 20, low=1, high=200, empty_ok=False) or 20
    runs = await store.apply(list_runs, user_id=params.get("user"), limit=limit)
    return {"scheduler": scheduler.state(), "runs": [r.model_dump(mode="json") for r in runs]}


def persona_json(store: AsyncStore, user_id: str, persona: Persona | None) -> dict[str, Any]:
    inputs = persona_inputs(store.index.records(user_id))
    if persona is None:
        return {"user_id": user_id, "text": deterministic_text(inputs), "stored": False}
    current = inputs_hash(inputs)
    return {
        **persona.model_dump(mode="json"),
        "stored": True,
        "stale": persona.source != "operator" and persona.inputs_hash != current,
    }


async def get_persona(store: AsyncStore, default_user: str, params: Query) -> dict[str, Any]:
    user = _user(default_user, params)
    return persona_json(store, user, store.store.get_persona(user))


async def put_persona(
    store: AsyncStore, default_user: str, params: Query, body: dict[str, Any]
) -> dict[str, Any]:
    """Body `{"text": "..."}`: an operator persona, which generation never overwrites."""
    user = _user(default_user, params)
    _known_fields(body, ("text",))
    text = body.get("text")
    if not isinstance(text, str) or not text.strip():
        raise bad_field("text", 'send {"text": "..."} with the persona text')
    if len(text.strip()) > MAX_PERSONA_CHARS:
        raise bad_field(
            "text", f"the persona is {len(text.strip())} characters; at most 800 are injected"
        )
    persona = await store.apply(BeliefStore.set_persona, user, text.strip(), source="operator")
    return persona_json(store, user, persona)


async def regenerate_persona(
    store: AsyncStore, keeper: PersonaKeeper, default_user: str, params: Query
) -> dict[str, Any]:
    """Regenerate now (model if configured, else the summary); an operator persona stays."""
    user = _user(default_user, params)
    persona = await keeper.refresh(user, force=True)
    if persona is None:
        raise ProxyError(500, f"no persona could be made for user {user!r}")
    return persona_json(store, user, persona)


def compaction_routes(
    store: AsyncStore,
    compactor: Compactor,
    scheduler: CompactionScheduler,
    keeper: PersonaKeeper,
    default_user: str,
) -> list[BaseRoute]:
    """Mount before the API's catch-all."""
    return [
        Route(
            "/api/compaction/run",
            endpoint(run_compaction, compactor, query=True, body=True),
            methods=["POST"],
        ),
        Route(
            "/api/compaction/runs",
            endpoint(compaction_runs, store, scheduler, query=True),
            methods=["GET"],
        ),
        Route(
            "/api/persona",
            endpoint(get_persona, store, default_user, query=True, clients=store),
            methods=["GET"],
        ),
        Route(
            "/api/persona",
            endpoint(put_persona, store, default_user, query=True, body=True),
            methods=["PUT"],
        ),
        Route(
            "/api/persona/regenerate",
            endpoint(regenerate_persona, store, keeper, default_user, query=True),
            methods=["POST"],
        ),
    ]
