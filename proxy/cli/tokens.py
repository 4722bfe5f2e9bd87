"""`tenure tokens create|list|revoke`: access tokens for one user (and optionally some agents
and scopes), or for the operator."""

from __future__ import annotations

import argparse
import json
import sys
import urllib.parse
from typing import Any

from beliefs.store.belief_store import BeliefStore
from proxy.cli.backend import with_backend
from proxy.security.tables import MIGRATIONS as SECURITY_TABLES
from proxy.security.tokens import create_token, list_tokens, revoke_token
from proxy.settings import Settings


def register(subparsers: Any) -> None:
    group = subparsers.add_parser("tokens", help="access tokens per user, agent and scope")
    sub = group.add_subparsers(title="token commands", metavar="COMMAND", required=True)
    cmd = sub.add_parser("create", help="make a token (shown once; only its hash is kept)")
    who = cmd.add_mutually_exclusive_group(required=True)
    who.add_argument("--user", help="the one user whose memory the token reaches")
    who.add_argument("--operator", action="store_true", help="the UI and the whole API")
    cmd.add_argument("--agent", action="append", default=[], help="allowed agent (repeatable)")
    cmd.add_argument(
        "--scope", action="append", default=[], help="allowed scope pattern, e.g. 'project:*'"
    )
    cmd.add_argument("--json", action="store_true")
    cmd.set_defaults(handler=_create)
    cmd = sub.add_parser("list", help="list the tokens (never the tokens themselves)")
    cmd.add_argument("--json", action="store_true")
    cmd.set_defaults(handler=_list)
    cmd = sub.add_parser("revoke", help="revoke a token: refused from its next request")
    cmd.add_argument("id")
    cmd.add_argument("--json", action="store_true")
    cmd.set_defaults(handler=_revoke)


def _local(store: BeliefStore) -> BeliefStore:
    store.ensure_schema(SECURITY_TABLES)
    return store


def _create(args: argparse.Namespace, settings: Settings) -> int:
    body = {
        "user": args.user,
        "operator": args.operator,
        "agents": args.agent,
        "scopes": args.scope,
    }

    def local(store: BeliefStore) -> dict[str, Any]:
        token, text = create_token(
            _local(store),
            user=args.user,
            agents=args.agent,
            scopes=args.scope,
            operator=args.operator,
        )
        return {**token.as_json(), "token": text}

    made = with_backend(
        settings, local, lambda api: api.send("POST", "/api/tokens", body), create=True
    )
    if args.json:
        print(json.dumps(made, indent=2))
        return 0
    print(made["token"])
    print(
        f"made {made['kind']} token {made['id']}{_reach(made)}; it is shown only now: "
        "store it where its client reads it (Authorization: Bearer <token>)",
        file=sys.stderr,
    )
    return 0


def _reach(token: dict[str, Any]) -> str:
    parts = [f" for user {token['user']}"] if token.get("user") else []
    if token.get("agents"):
        parts.append(f"as agent {', '.join(token['agents'])}")
    if token.get("scopes"):
        parts.append(f"in scopes {', '.join(token['scopes'])}")
    return ", ".join(parts)


def _list(args: argparse.Namespace, settings: Settings) -> int:
    tokens = with_backend(
        settings,
        lambda store: [t.as_json() for t in list_tokens(_local(store))],
        lambda api: api.get("/api/tokens"),
    )
    if args.json:
        print(json.dumps(tokens, indent=2))
        return 0
    for t in tokens:
        state = f"revoked {t['revoked_at']}" if t["revoked_at"] else "live"
        print(f"{t['id']}  {t['kind']}{_reach(t)}  made {t['created_at']}  {state}")
    if not tokens:
        print("no tokens")
    return 0


def _revoke(args: argparse.Namespace, settings: Settings) -> int:
    path = f"/api/tokens/{urllib.parse.quote(args.id, safe='')}"
    token = with_backend(
        settings,
        lambda store: revoke_token(_local(store), args.id).as_json(),
        lambda api: api.send("DELETE", path),
    )
    if args.json:
        print(json.dumps(token, indent=2))
        return 0
    print(f"revoked token {token['id']}{_reach(token)}")
    return 0
