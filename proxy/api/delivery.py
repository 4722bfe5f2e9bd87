"""Delivery controls over JSON: namespace rules, explicit recall and the prompt preview."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from starlette.routing import BaseRoute, Route

from beliefs.context.layers import Context
from beliefs.context.recall import recall
from beliefs.context.render import system_block, user_block
from beliefs.documents.retrieval import cited, finder_for
from beliefs.model.errors import reason
from beliefs.model.record import fields_json
from beliefs.model.rules import Rule
from beliefs.search.matcher import Hit
from beliefs.store.async_store import AsyncStore
from beliefs.store.rule_store import EDITABLE, create_rule, delete_rule, load_rules, update_rule
from compaction import PersonaKeeper
from proxy.api.endpoint import endpoint
from proxy.api.query_params import Query, query_int
from proxy.errors import ProxyError, bad_field
from proxy.gateway.delivery import build_context, context_request
from proxy.gateway.identity import parse_scopes
from proxy.gateway.protocols.chat_completions import place_openai
from proxy.settings import Settings

_BOOL = {"true": True, "1": True, "false": False, "0": False}


def _rule_json(rule: Rule) -> dict[str, Any]:
    return {**rule.model_dump(mode="json"), "label": rule.label, "warnings": rule.warnings}


def _validation(exc: ValidationError) -> ProxyError:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or "body"
    return bad_field(field, f"{field} {err.get('input')!r}: {reason(err)}")


async def list_rules(store: AsyncStore) -> list[dict[str, Any]]:
    """Every live rule, with its template's label and its warnings (a bonus above 0.3)."""
    rules = await store.apply(lambda s: load_rules(s.conn))
    return [_rule_json(r) for r in rules]


# The JSON type of each rule field (checked before the model, which would read "0.2" or true
# as a number).
_RULE_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "pattern": ((str,), "a string such as domain:legal"),
    "bonus": ((int, float), "a number from 0 to 1"),
    "template": ((str, type(None)), "a string, or null for none"),
    "memory_class": ((str, type(None)), "a class name, or null for none"),
}


def _rule_fields(data: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(data) - set(EDITABLE))
    if unknown:
        raise bad_field(unknown[0], f"unknown rule field(s) {unknown}; use {', '.join(EDITABLE)}")
    for name, value in data.items():
        kinds, wanted = _RULE_TYPES[name]
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise bad_field(name, f"{name}={json.dumps(value)[:80]}: use {wanted}")
    return data


async def add_rule(store: AsyncStore, body: dict[str, Any]) -> dict[str, Any]:
    """Add a rule. Body: pattern (required), bonus (0-1), template, memory_class."""
    data = _rule_fields(body)
    try:
        rule = Rule.model_validate(data)
    except ValidationError as exc:
        raise _validation(exc) from None
    await store.apply(create_rule, rule)
    return _rule_json(rule)


async def edit_rule(store: AsyncStore, rule_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """Change any of pattern, bonus, template, memory_class (null clears the last two)."""
    data = _rule_fields(body)
    try:  # each field on its own first, so a bad value is named before the rule is looked up
        Rule.model_validate({"pattern": "user:universal", **data})
    except ValidationError as exc:
        raise _validation(exc) from None
    rule = await store.apply(update_rule, rule_id, data)
    return _rule_json(rule)


async def remove_rule(store: AsyncStore, rule_id: str) -> None:
    """Retire a rule; a deleted shipped default is never added back by an upgrade."""
    await store.apply(delete_rule, rule_id)


def _hit_json(context_hit: Hit, tags: tuple[str, ...] = ()) -> dict[str, Any]:
    out = fields_json(context_hit.belief)
    out["score"] = round(context_hit.score, 4)
    out["clauses"] = [c.as_dict() for c in context_hit.clauses]
    out.update(cited(context_hit))  # a passage: its file and heading, its citation
    if tags:
        out["tags"] = list(tags)
    return out


def _scopes(params: Query) -> tuple[str, ...]:
    return parse_scopes(params.get("scope", ""), "scope")


def _required(params: Query, name: str) -> str:
    value = params.get(name, "")
    if not value.strip():
        raise bad_field(name, f"{name} is required, e.g. ?{name}=...")
    return value


async def recall_beliefs(store: AsyncStore, default_user: str, params: Query) -> dict[str, Any]:
    """Explicit recall: never gated by delivery, trust, inject_scopes or review state."""
    raw_flag = params.get("include_superseded", "false").lower()
    if raw_flag not in _BOOL:
        raise bad_field("include_superseded", f"include_superseded={raw_flag!r}: use true or false")
    limit = query_int(params, "limit", 20, low=1, high=200, empty_ok=False) or 20
    hits = recall(
        store.index,
        params.get("user") or default_user,
        _required(params, "query"),
        scopes=_scopes(params),
        agent_id=params.get("agent"),
        include_superseded=_BOOL[raw_flag],
        limit=limit,
        rules=store.rules,
    )
    user, query = params.get("user") or default_user, _required(params, "query")
    hits += finder_for(store.store).recall(user, query, scopes=_scopes(params), limit=limit)
    return {"hits": [_hit_json(r.hit, r.tags) for r in hits]}


def preview_json(context: Context, messages: list[dict[str, Any]]) -> dict[str, Any]:
    standing, turn = system_block(context), user_block(context)
    return {
        "persona": context.persona,
        "pinned": [fields_json(b) for b in context.pinned],
        "relevant": [_hit_json(h) for h in context.relevant],
        "open_questions": [fields_json(b) for b in context.open_questions],
        "budget": context.budget.as_dict(),
        "system_block": standing,
        "user_block": turn,
        "chars": len(standing) + len(turn),
        "messages": messages,
    }


async def preview(
    store: AsyncStore, settings: Settings, persona: PersonaKeeper, params: Query
) -> dict[str, Any]:
    """Exactly what a request with this identity, model and text would receive."""
    user_id = params.get("user") or settings.default_user
    scopes = _scopes(params) or tuple(settings.default_scopes)
    query = params.get("query", "")
    model = params.get("model") or "gpt-4o"
    ctx_request = context_request(
        settings,
        user_id=user_id,
        scopes=scopes,
        agent_id=params.get("agent"),
        query=query,
        model=model,
    )
    text, covers = persona.persona_for(user_id)
    context = build_context(store.store, ctx_request, text, covers)
    body = {"model": model, "messages": [{"role": "user", "content": query}]}
    placed = place_openai(body, system_block(context), user_block(context))
    return preview_json(context, placed["messages"])


def delivery_routes(
    store: AsyncStore, settings: Settings, persona: PersonaKeeper
) -> list[BaseRoute]:
    return [
        Route("/api/rules", endpoint(list_rules, store), methods=["GET"]),
        Route("/api/rules", endpoint(add_rule, store, body=True, status=201), methods=["POST"]),
        Route(
            "/api/rules/{rule_id}",
            endpoint(edit_rule, store, path="rule_id", body=True),
            methods=["PATCH"],
        ),
        Route(
            "/api/rules/{rule_id}",
            endpoint(remove_rule, store, path="rule_id", status=204),
            methods=["DELETE"],
        ),
        Route(
            "/api/recall",
            endpoint(recall_beliefs, store, settings.default_user, query=True, clients=store),
            methods=["GET"],
        ),
        Route(
            "/api/prompts/preview",
            endpoint(preview, store, settings, persona, query=True),
            methods=["GET"],
        ),
    ]
