"""`GET /api/openapi.json`: the API described from the app's own routes, so endpoints other
parts mount show up without being listed here. Known query parameters and bodies are added
from the table below; anything else is described by its handler's docstring."""

from __future__ import annotations

import inspect
import re
from typing import Any, get_args

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from beliefs.model.models import Belief, MemoryClass
from proxy.api.belief_input import CREATABLE, EDITABLE, MAX_EXPIRY_DAYS

_PATH_PARAM = re.compile(r"{([^}:]+)(?::[^}]*)?}")
_FILTERS = ["user", "scope", "agent", "type", "status", "review_state", "pinned"]
QUERY: dict[tuple[str, str], list[str]] = {
    ("GET", "/api/beliefs"): [
        *_FILTERS,
        "include_superseded",
        "include_deleted",
        "with_history",
        "q",
        "prefix",
        "ids",
        "limit",
        "offset",
    ],
    ("GET", "/api/facets"): ["user"],
    ("GET", "/api/injections"): ["request_id", "user", "belief_id", "limit", "as_injected"],
    ("GET", "/api/beliefs/{belief_id}/injections"): ["limit"],
    ("GET", "/api/jobs"): ["status", "limit"],
    ("GET", "/api/conflicts"): ["status", "user", "limit"],
    ("GET", "/api/persona"): ["user"],
    ("PUT", "/api/persona"): ["user"],
    ("POST", "/api/persona/regenerate"): ["user"],
    ("GET", "/api/compaction/runs"): ["user", "limit"],
    ("GET", "/api/recall"): ["query", "user", "scope", "agent", "include_superseded", "limit"],
    ("GET", "/api/prompts/preview"): ["user", "scope", "agent", "model", "query"],
    ("GET", "/api/mcp/calls"): ["user", "tool", "belief_id", "limit"],
    ("GET", "/api/sources"): ["user", "scope"],
}
_NAMES = {"type": "array", "items": {"type": "string"}}
_FIELD_SCHEMAS: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "str?": {"type": ["string", "null"]},
    "names": _NAMES,
    "bool": {"type": "boolean"},
    "number": {"type": "number", "minimum": 0, "maximum": 1},
    "days?": {
        "type": ["number", "null"],
        "exclusiveMinimum": 0,
        "maximum": MAX_EXPIRY_DAYS,
        "description": "expires_at = now + this many days; null clears it",
    },
}


def _fields_schema(fields: dict[str, str], required: list[str] | None = None) -> dict[str, Any]:
    props = {
        name: _FIELD_SCHEMAS.get(kind, {"type": "string", "description": f"one of: {kind}"})
        for name, kind in fields.items()
    }
    schema: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/api/beliefs"): _fields_schema(CREATABLE, ["canonical_name"]),
    ("PATCH", "/api/beliefs/{belief_id}"): _fields_schema(EDITABLE),
    ("POST", "/api/beliefs/{belief_id}/review"): {
        "type": "object",
        "properties": {"state": {"enum": ["confirmed", "rejected", "pending"]}},
        "required": ["state"],
    },
    ("POST", "/api/conflicts/{conflict_id}/resolve"): {
        "type": "object",
        "properties": {"resolution": {"enum": ["keep_existing", "take_new", "keep_both"]}},
        "required": ["resolution"],
    },
}
BODIES[("POST", "/api/compaction/run")] = {
    "type": "object",
    "properties": {
        "user": {"type": "string"},
        "scope": {"type": "string"},
        "dry_run": {"type": "boolean"},
        "force": {"type": "boolean"},
    },
}
_RULE_FIELDS: dict[str, Any] = {
    "pattern": {
        "type": "string",
        "description": "project:*, domain:legal, domain:notes/${user_id}",
    },
    "bonus": {"type": "number", "minimum": 0, "maximum": 1, "description": "0.2 = +20 %"},
    "template": {"type": ["string", "null"], "description": "{{content}} marks the hits"},
    "memory_class": {
        "enum": [*get_args(MemoryClass), None],
    },
}
BODIES[("POST", "/api/rules")] = {
    "type": "object",
    "properties": _RULE_FIELDS,
    "required": ["pattern"],
    "additionalProperties": False,
}
BODIES[("PATCH", "/api/rules/{rule_id}")] = {
    "type": "object",
    "properties": _RULE_FIELDS,
    "additionalProperties": False,
}
BODIES[("PUT", "/api/persona")] = {
    "type": "object",
    "properties": {"text": {"type": "string", "maxLength": 800}},
    "required": ["text"],
}
ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "message": {"type": "string"},
                "type": {"type": "string"},
                "status": {"type": "integer"},
                "field": {"type": "string", "description": "the request field that is wrong"},
            },
            "required": ["message"],
        }
    },
}


def _operation(method: str, path: str, endpoint: Any) -> dict[str, Any]:
    doc = inspect.getdoc(endpoint) or ""
    summary, _, description = doc.partition("\n")
    op: dict[str, Any] = {
        "operationId": f"{method.lower()}_{getattr(endpoint, '__name__', 'endpoint')}",
        "summary": summary.strip() or f"{method} {path}",
        "responses": {
            "200": {"description": "OK", "content": {"application/json": {}}},
            "default": {
                "description": "Error",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            },
        },
    }
    if description.strip():
        op["description"] = description.strip()
    params = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in _PATH_PARAM.findall(path)
    ]
    params += [
        {"name": name, "in": "query", "required": False, "schema": {"type": "string"}}
        for name in QUERY.get((method, path), [])
    ]
    if params:
        op["parameters"] = params
    body = BODIES.get((method, path))
    if body is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    elif method in ("POST", "PUT", "PATCH"):
        op["requestBody"] = {"required": False, "content": {"application/json": {}}}
    return op


def describe(routes: list[BaseRoute]) -> dict[str, Any]:
    """The OpenAPI 3.1 document for every `/api/` route (and `/healthz`)."""
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        if not isinstance(route, Route) or route.methods is None:
            continue
        path = route.path
        if not (path.startswith("/api/") or path == "/healthz") or ":path}" in path:
            continue
        for method in sorted(route.methods - {"HEAD"}):
            paths.setdefault(path, {}).setdefault(
                method.lower(), _operation(method, path, route.endpoint)
            )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Tenure API",
            "version": "1",
            "description": (
                "Beliefs, their history and the requests they were injected into. With "
                "TENURE_API_KEY set or access tokens made, send Authorization: Bearer <key "
                "or token>; a client token reaches its own user's beliefs only. Errors are "
                '{"error": {"message", "field"?}}.'
            ),
        },
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": {"Belief": Belief.model_json_schema(), "Error": ERROR_SCHEMA},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


async def openapi(request: Request) -> Response:
    """This document: every API endpoint the server mounts."""
    return JSONResponse(describe(request.app.routes))


def openapi_routes() -> list[BaseRoute]:
    return [Route("/api/openapi.json", openapi, methods=["GET"])]
