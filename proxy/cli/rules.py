"""`tenure rules list|add|edit|delete`: namespace rules for ranking, templates and classes."""

from __future__ import annotations

import argparse
import json
import sys
import urllib.parse
from typing import Any

from pydantic import ValidationError

from beliefs.model.errors import InvalidBelief, reason
from beliefs.model.models import MemoryClass
from beliefs.model.rules import Rule
from beliefs.store.rule_store import create_rule, delete_rule, load_rules, update_rule
from proxy.cli.api_client import ApiClient
from proxy.cli.backend import with_backend
from proxy.settings import Settings

CLASSES: tuple[MemoryClass, ...] = ("episodic", "semantic", "procedural", "working", "document")


def register(subparsers: Any) -> None:
    group = subparsers.add_parser("rules", help="namespace rules: bonuses, templates, classes")
    sub = group.add_subparsers(title="rule commands", metavar="COMMAND", required=True)
    cmd = sub.add_parser("list", help="list the rules")
    cmd.add_argument("--json", action="store_true")
    cmd.set_defaults(handler=_list)
    for name, handler in (("add", _add), ("edit", _edit)):
        cmd = sub.add_parser(name, help=f"{name} a rule")
        if name == "edit":
            cmd.add_argument("id")
            cmd.add_argument("--pattern")
        else:
            cmd.add_argument(
                "pattern", help="e.g. project:*, domain:legal, domain:notes/${user_id}"
            )
        cmd.add_argument("--bonus", type=float, help="ranking surcharge 0-1 (0.2 = +20 %%)")
        cmd.add_argument("--template", help="instruction text; {{content}} marks the hits")
        cmd.add_argument("--memory-class", choices=CLASSES, help="default class for new beliefs")
        cmd.set_defaults(handler=handler)
    cmd = sub.add_parser("delete", help="delete a rule (a deleted default never comes back)")
    cmd.add_argument("id")
    cmd.set_defaults(handler=_delete)


def _print(rule: Rule) -> None:
    for warning in rule.warnings:
        print(f"warning: {warning}", file=sys.stderr)


def _rules(data: Any) -> list[Rule]:
    fields = set(Rule.model_fields)
    return [Rule.model_validate({k: v for k, v in r.items() if k in fields}) for r in data]


def _list(args: argparse.Namespace, settings: Settings) -> int:
    rules = with_backend(
        settings, lambda store: load_rules(store.conn), lambda api: _rules(api.get("/api/rules"))
    )
    if args.json:
        print(json.dumps([r.model_dump(mode="json") for r in rules], indent=2))
        return 0
    for r in rules:
        template = (r.template or "").replace("\n", " ")
        print(f"{r.id}  {r.pattern}  bonus {r.bonus:g}  class {r.memory_class or '-'}  {template}")
    if not rules:
        print("no rules")
    return 0


def _changes(args: argparse.Namespace) -> dict[str, Any]:
    fields = {"bonus": args.bonus, "template": args.template, "memory_class": args.memory_class}
    if getattr(args, "pattern", None) is not None:
        fields["pattern"] = args.pattern
    return {k: v for k, v in fields.items() if v is not None}


def _add(args: argparse.Namespace, settings: Settings) -> int:
    changes = _changes(args)
    try:
        rule = Rule.model_validate(changes)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(map(str, err["loc"]))
        raise InvalidBelief(f"rule {field} {err.get('input')!r}: {reason(err)}") from None

    def remote(api: ApiClient) -> Rule:
        return _rules([api.send("POST", "/api/rules", changes)])[0]

    rule = with_backend(settings, lambda store: create_rule(store, rule), remote, create=True)
    _print(rule)
    print(f"added rule {rule.id} for {rule.pattern}")
    return 0


def _edit(args: argparse.Namespace, settings: Settings) -> int:
    changes, path = _changes(args), f"/api/rules/{urllib.parse.quote(args.id, safe='')}"
    rule = with_backend(
        settings,
        lambda store: update_rule(store, args.id, changes),
        lambda api: _rules([api.send("PATCH", path, changes)])[0],
    )
    _print(rule)
    print(f"updated rule {rule.id}")
    return 0


def _delete(args: argparse.Namespace, settings: Settings) -> int:
    path = f"/api/rules/{urllib.parse.quote(args.id, safe='')}"
    with_backend(
        settings, lambda store: delete_rule(store, args.id), lambda api: api.send("DELETE", path)
    )
    print(f"deleted rule {args.id}")
    return 0
