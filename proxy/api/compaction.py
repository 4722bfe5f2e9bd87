"""Compaction and persona API: `POST /api/compaction/run`, `GET /api/compaction/runs`,
`GET/PUT /api/persona?user=` and `POST /api/persona/regenerate?user=`."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from beliefs.context import MAX_PERSONA_CHARS
from beliefs.models import SCOPE_PATTERN
from beliefs.persona import Persona
from compaction import list_runs
from compaction.persona import deterministic_text, inputs_hash, persona_inputs
from proxy.api.belief_input import read_json
from proxy.api.query_params import BOOLEANS, query_int
from proxy.errors import ProxyError, bad_field
from proxy.gateway.identity import MAX_ID_CHARS
from proxy.runtime import Runtime, runtime_of


def _option(request: Request, body: dict[str, Any], name: str) -> Any:
    return body.get(name, request.query_params.get(name))


def _flag(request: Request, body: dict[str, Any], name: str) -> bool:
    value = _option(request, body, name)
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


def _user(request: Request) -> str:
    return _checked_user(
        request.query_params.get("user") or runtime_of(request).settings.default_user
    )


def _known_fields(body: dict[str, Any], accepted: tuple[str, ...]) -> None:
    """A typo (`dryrun`) must not be ignored: on a run it would mean a real compaction."""
    for name in body:
        if name not in accepted:
            raise bad_field(name, f"unknown field {name!r}; accepted: {', '.join(accepted)}")


async def run_compaction(request: Request) -> Response:
    """Body or query: user, scope, dry_run, force. 409 while a run is in progress."""
    rt = runtime_of(request)
    body = await read_json(request)
    _known_fields(body, RUN_FIELDS)
    user, scope = _option(request, body, "user"), _option(request, body, "scope")
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
    report = await rt.compactor.run(
        user_id=user,
        scope=scope,
        dry_run=_flag(request, body, "dry_run"),
        force=_flag(request, body, "force"),
        trigger="api",
    )
    return JSONResponse(report.model_dump(mode="json"))


async def compaction_runs(request: Request) -> Response:
    """Newest first; `?user=`, `?limit=` (1-200, default 20)."""
    rt = runtime_of(request)
    limit = query_int(request, "limit", 20, low=1, high=200, empty_ok=False) or 20
    runs = await rt.thread.run(
        list_runs, rt.store, user_id=request.query_params.get("user"), limit=limit
    )
    return JSONResponse(
        {"scheduler": rt.scheduler.state(), "runs": [r.model_dump(mode="json") for r in runs]}
    )


def persona_json(rt: Runtime, user_id: str, persona: Persona | None) -> dict[str, Any]:
    inputs = persona_inputs(rt.store.index.beliefs(user_id))
    if persona is None:
        return {"user_id": user_id, "text": deterministic_text(inputs), "stored": False}
    current = inputs_hash(inputs)
    return {
        **persona.model_dump(mode="json"),
        "stored": True,
        "stale": persona.source != "operator" and persona.inputs_hash != current,
    }


async def get_persona(request: Request) -> Response:
    rt = runtime_of(request)
    user = _user(request)
    return JSONResponse(persona_json(rt, user, rt.store.get_persona(user)))


async def put_persona(request: Request) -> Response:
    """Body `{"text": "..."}`: an operator persona, which generation never overwrites."""
    rt = runtime_of(request)
    user = _user(request)
    body = await read_json(request)
    _known_fields(body, ("text",))
    text = body.get("text")
    if not isinstance(text, str) or not text.strip():
        raise bad_field("text", 'send {"text": "..."} with the persona text')
    if len(text.strip()) > MAX_PERSONA_CHARS:
        raise bad_field(
            "text", f"the persona is {len(text.strip())} characters; at most 800 are injected"
        )
    persona = await rt.thread.run(rt.store.set_persona, user, text.strip(), source="operator")
    return JSONResponse(persona_json(rt, user, persona))


async def regenerate_persona(request: Request) -> Response:
    """Regenerate now (model if configured, else the summary); an operator persona stays."""
    rt = runtime_of(request)
    user = _user(request)
    persona = await rt.persona.refresh(user, force=True)
    if persona is None:
        raise ProxyError(500, f"no persona could be made for user {user!r}")
    return JSONResponse(persona_json(rt, user, persona))


def compaction_routes() -> list[BaseRoute]:
    """Mount before the API's catch-all."""
    return [
        Route("/api/compaction/run", run_compaction, methods=["POST"]),
        Route("/api/compaction/runs", compaction_runs, methods=["GET"]),
        Route("/api/persona", get_persona, methods=["GET"]),
        Route("/api/persona", put_persona, methods=["PUT"]),
        Route("/api/persona/regenerate", regenerate_persona, methods=["POST"]),
    ]
