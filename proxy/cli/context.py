"""`tenure context`: what a request would receive from memory, with scores and reasons."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any

from beliefs.context.assembly import ContextRequest, assemble
from beliefs.context.layers import Context
from beliefs.context.render import system_block, user_block
from beliefs.context.tokens import token_counter
from beliefs.documents.retrieval import finder_for
from beliefs.index.belief_index import BeliefIndex
from beliefs.index.semantic import enable as enable_semantic
from beliefs.model.errors import BeliefError
from beliefs.model.record import fields_json
from beliefs.store.belief_store import BeliefStore
from proxy.cli import count
from proxy.cli.api_client import ApiClient
from proxy.cli.backend import with_backend
from proxy.errors import ProxyError
from proxy.gateway.identity import parse_scopes
from proxy.settings import Settings


def register(subparsers: Any) -> None:
    cmd = subparsers.add_parser(
        "context", help="show the memory a request would receive (persona, pinned, relevant)"
    )
    cmd.add_argument("--user", required=True, help="the user id")
    cmd.add_argument(
        "--scope", action="append", default=[], help="a scope (repeatable); user:universal always"
    )
    cmd.add_argument("--agent", help="the calling agent id (beliefs of other agents are hidden)")
    cmd.add_argument("--query", default="", help="the turn's text")
    cmd.add_argument("--max-beliefs", type=int, default=None, help="cap on pinned + relevant")
    cmd.add_argument("--token-budget", type=count(1), default=None, help="tokens memory may use")
    cmd.add_argument("--as-of", help="ISO time: what the agent would have received then")
    cmd.add_argument("--render", action="store_true", help="print the blocks placed in the prompt")
    cmd.add_argument("--json", action="store_true", help="print JSON")
    cmd.set_defaults(handler=_context)


def context_json(ctx: Context) -> dict[str, Any]:
    return {
        "persona": ctx.persona,
        "pinned": [fields_json(b) for b in ctx.pinned],
        "relevant": [
            {
                **fields_json(h.belief),
                "score": round(h.score, 4),
                "clauses": [c.as_dict() for c in h.clauses],
                **({"relevance": h.relevance.as_dict()} if h.relevance is not None else {}),
            }
            for h in ctx.relevant
        ],
        "open_questions": [fields_json(b) for b in ctx.open_questions],
        "budget": ctx.budget.as_dict(),
    }


def _parse_time(raw: str) -> datetime:
    try:
        value = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        example = "2026-10-01T12:00:00Z"
        raise BeliefError(f"--as-of {raw!r} is not an ISO time, e.g. {example}") from None
    if value.tzinfo is None:
        raise BeliefError(f"--as-of {raw!r} has no time zone; add Z or +00:00")
    return value


def _context(args: argparse.Namespace, settings: Settings) -> int:
    max_beliefs = settings.max_beliefs if args.max_beliefs is None else args.max_beliefs
    if max_beliefs < 0:
        raise BeliefError(f"--max-beliefs {max_beliefs} must be 0 or more")
    try:
        scopes = parse_scopes(",".join(args.scope), "--scope")
    except ProxyError as exc:  # the same check as the gateway's, said for the command line
        raise BeliefError(exc.message) from None
    request = ContextRequest(
        user_id=args.user,
        scopes=scopes,
        query=args.query,
        agent_id=args.agent,
        max_beliefs=max_beliefs,
        token_budget=args.token_budget,
        curated=settings.curated_mode,
        min_trust=settings.inject_min_trust,
        inject_scopes=settings.inject_scopes,
    )

    def local(store: BeliefStore) -> dict[str, Any]:
        persona = store.get_persona(args.user)
        text = persona.text if persona else ""
        index, now = store.index, None
        if args.as_of:
            now = _parse_time(args.as_of)
            index = BeliefIndex()
            index.load(store.as_of(args.user, now))
        if settings.semantic:
            enable_semantic(index)
        ctx = assemble(
            index,
            request,
            persona=text,
            now=now,
            count_tokens=token_counter(),
            rules=store.rules,
            contested=None if args.as_of else store.contested,
            passages=None if args.as_of else finder_for(store).for_turn,
        )
        return {
            **context_json(ctx),
            "system_block": system_block(ctx),
            "user_block": user_block(ctx),
        }

    remote: Callable[[ApiClient], dict[str, Any]] | str = functools.partial(
        _preview, args=args, scopes=scopes
    )
    if args.as_of or args.token_budget is not None or args.max_beliefs is not None:
        remote = (
            "--as-of, --token-budget and --max-beliefs need the database itself (the server's "
            "preview answers only with its own settings); stop the server or drop those options"
        )
    data = with_backend(settings, local, remote)
    if args.json:
        shown = {k: data[k] for k in ("persona", "pinned", "relevant", "open_questions", "budget")}
        json.dump(shown, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    elif args.render:
        for block in (data["system_block"], data["user_block"]):
            if block:
                print(block, end="\n\n")
    else:
        _print_text(data)
    return 0


def _preview(
    client: ApiClient, args: argparse.Namespace, scopes: tuple[str, ...]
) -> dict[str, Any]:
    """While the server holds the database, ask its prompt preview for the same context."""
    data: dict[str, Any] = client.get(
        "/api/prompts/preview",
        user=args.user,
        scope=",".join(scopes) or None,
        agent=args.agent,
        query=args.query,
    )
    return data


def _print_text(data: dict[str, Any]) -> None:
    print(f"persona: {data['persona'] or '(none)'}")
    for layer in ("pinned", "relevant", "open_questions"):
        print(f"{layer.replace('_', ' ')} ({len(data[layer])}):")
        for b in data[layer]:
            line = f"  {b['id']}  {b['canonical_name']}"
            if "score" in b:
                why = ", ".join(f"{c['field']}:{c['term']}={c['score']:.2f}" for c in b["clauses"])
                line += f"  score {b['score']:.2f}  ({why})"
            print(line)
    budget = data["budget"]
    limit = budget["limit_tokens"]
    of = f"of {limit}" if limit is not None else "(no limit)"
    shed = ", ".join(s["id"] for s in budget["shed"]) or "nothing"
    print(f"budget: {budget['used_tokens']} tokens used {of}; shed {shed}")
