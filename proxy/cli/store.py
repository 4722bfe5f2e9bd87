"""Store commands: import, export, verify and `beliefs list|show|history|chain|pin|share|…`."""

from __future__ import annotations

import argparse
import json
import sys
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from beliefs.model.models import Belief, HistoryEvent
from beliefs.store.interchange import FORMATS, iter_file, to_jsonl, to_tenure
from proxy.cli import count
from proxy.cli.api_client import ApiClient
from proxy.cli.backend import with_backend
from proxy.cli.text import belief_detail, belief_table, chain_lines, history_lines
from proxy.settings import Settings

if TYPE_CHECKING:  # the store (DuckDB, psycopg) is imported only by a command that opens it
    from beliefs.store.belief_store import BeliefStore

T = TypeVar("T")


def register(subparsers: Any) -> None:
    read_only = argparse.ArgumentParser(add_help=False)
    read_only.add_argument(
        "--read-only",
        action="store_true",
        help="open the database read-only (works alongside other readers)",
    )
    reads = argparse.ArgumentParser(add_help=False, parents=[read_only])
    reads.add_argument("--json", action="store_true", help="print JSON instead of text")

    cmd = subparsers.add_parser("import", help="import beliefs from a Tenure JSON or JSONL file")
    cmd.add_argument("file", help="the file to import")
    cmd.add_argument("--format", choices=FORMATS, help="file format (default: detect)")
    cmd.set_defaults(handler=_import)

    cmd = subparsers.add_parser(
        "export", parents=[read_only], help="write beliefs to stdout (JSONL by default)"
    )
    cmd.add_argument("--include-superseded", action="store_true", help="also superseded beliefs")
    cmd.add_argument("--include-deleted", action="store_true", help="also soft-deleted beliefs")
    cmd.add_argument("--format", choices=("jsonl", "tenure"), default="jsonl")
    cmd.add_argument("--user", help="only this user's beliefs")
    cmd.set_defaults(handler=_export)

    cmd = subparsers.add_parser("verify", parents=[reads], help="check the store's invariants")
    cmd.set_defaults(handler=_verify)

    group = subparsers.add_parser("beliefs", help="list, inspect and correct beliefs")
    sub = group.add_subparsers(title="belief commands", metavar="COMMAND", required=True)

    cmd = sub.add_parser("list", parents=[reads], help="list beliefs (live ones by default)")
    cmd.add_argument("--user")
    cmd.add_argument("--scope", help="e.g. domain:code, project:tenure, user:universal")
    cmd.add_argument("--agent")
    cmd.add_argument("--type", choices=_choices("type"))
    cmd.add_argument("--status", choices=_choices("epistemic_status"))
    cmd.add_argument("--pinned", action=argparse.BooleanOptionalAction, default=None)
    cmd.add_argument("--review-state", choices=_choices("review_state"))
    cmd.add_argument("--include-superseded", action="store_true")
    cmd.add_argument("--include-deleted", action="store_true")
    cmd.add_argument("--limit", type=count(1))
    cmd.set_defaults(handler=_list)

    for name, read in READS.items():
        cmd = sub.add_parser(name, parents=[reads], help=read.help)
        cmd.add_argument("id")
        cmd.set_defaults(handler=_read, read=read)

    json_only = argparse.ArgumentParser(add_help=False)
    json_only.add_argument("--json", action="store_true", help="print the belief as JSON")
    for name, handler, text in (
        ("pin", _pin, "always inject this belief in its scopes"),
        ("unpin", _unpin, "stop pinning this belief"),
        ("share", _share, "let every agent of the user receive this agent's belief"),
        ("unshare", _unshare, "only the agent that wrote this belief receives it again"),
        ("delete", _delete, "hide a belief (restorable); --hard removes it for good"),
        ("restore", _restore, "undo a soft delete"),
    ):
        cmd = sub.add_parser(name, parents=[json_only], help=text)
        cmd.add_argument("id")
        if name == "delete":
            cmd.add_argument(
                "--hard", action="store_true", help="remove the row for good (history is kept)"
            )
        cmd.set_defaults(handler=handler)


def _choices(field: str) -> list[str]:
    annotation = Belief.model_fields[field].annotation
    return list(getattr(annotation, "__args__", ()))


def _backend(
    settings: Settings,
    args: argparse.Namespace,
    local: Callable[[BeliefStore], T],
    remote: Callable[[ApiClient], T] | str,
    *,
    create: bool = False,
) -> T:
    """The database, or the API of the server holding it (see `backend.with_backend`)."""
    read_only = bool(getattr(args, "read_only", False))
    return with_backend(settings, local, remote, read_only=read_only, create=create)


_API_NAMES = {"user_id": "user", "agent_id": "agent"}  # store.list's names as the API's


def _listed(settings: Settings, args: argparse.Namespace, **filters: Any) -> list[Belief]:
    """`store.list(**filters)` on the database, or the same filters on `GET /api/beliefs`."""
    params = {_API_NAMES.get(name, name): value for name, value in filters.items()}
    if params.get("pinned") is not None:  # the client leaves a False parameter out
        params["pinned"] = str(params["pinned"]).lower()
    return _backend(
        settings,
        args,
        lambda store: store.list(**filters),
        lambda api: _beliefs(api.get("/api/beliefs", **params)),
    )


def _beliefs(data: Any) -> list[Belief]:
    return [Belief.model_validate(item) for item in data]


def _print(lines: Iterable[str]) -> None:
    for line in lines:
        sys.stdout.write(line + "\n")


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def _dump(belief: Belief) -> dict[str, Any]:
    return belief.model_dump(mode="json")


def _import(args: argparse.Namespace, settings: Settings) -> int:
    beliefs = iter_file(args.file, args.format)  # read as it is written, a batch at a time

    def remote(api: ApiClient) -> int:
        answer = api.send("POST", "/api/import", text="\n".join(to_jsonl(beliefs)) + "\n")
        return int(answer["imported"])

    def local(store: BeliefStore) -> int:
        return store.import_beliefs(beliefs)

    # The rows are only written: reading the stored beliefs into memory first would cost
    # the store's size in memory and time for nothing.
    count = with_backend(settings, local, remote, create=True, indexed=False)
    _print([f"imported {count} belief{'s' if count != 1 else ''} from {args.file}"])
    return 0


def _export(args: argparse.Namespace, settings: Settings) -> int:
    filters: dict[str, Any] = {
        "include_superseded": args.include_superseded,
        "include_deleted": args.include_deleted,
    }
    beliefs = _listed(settings, args, user_id=args.user, with_history=True, **filters)
    if args.format == "tenure":
        _print([to_tenure(beliefs)])
    else:
        _print(to_jsonl(beliefs))
    return 0


def _verify(args: argparse.Namespace, settings: Settings) -> int:
    report: dict[str, Any] = _backend(
        settings, args, _verify_report, lambda api: dict(api.get("/api/verify"))
    )
    problems, total = list(report["problems"]), int(report["beliefs"])
    if args.json:
        _print_json({"ok": not problems, "beliefs": total, "problems": problems})
    elif problems:
        _print([f"{len(problems)} problem{'s' if len(problems) != 1 else ''}:"])
        _print(f"  {p}" for p in problems)
    else:
        _print([f"ok: {total} beliefs, no problems"])
    return 1 if problems else 0


def _list(args: argparse.Namespace, settings: Settings) -> int:
    filters: dict[str, Any] = {
        "type": args.type,
        "status": args.status,
        "pinned": args.pinned,
        "review_state": args.review_state,
        "include_superseded": args.include_superseded,
        "include_deleted": args.include_deleted,
        "limit": args.limit,
    }
    beliefs = _listed(
        settings, args, user_id=args.user, scope=args.scope, agent_id=args.agent, **filters
    )
    if args.json:
        _print_json([_dump(b) for b in beliefs])
    else:
        _print(belief_table(beliefs))
    return 0


@dataclass(frozen=True)
class BeliefRead:
    """A read of one belief's records: the store's call, the API path below the belief's, how
    the API's JSON becomes the records, and how they print as text and as JSON."""

    help: str
    local: Callable[[BeliefStore, str], Any]
    path: str
    model: Callable[[Any], Any]
    text: Callable[[str, Any], Iterable[str]]
    as_json: Callable[[Any], Any]


def _dumps(items: Iterable[Belief | HistoryEvent]) -> list[dict[str, Any]]:
    return [item.model_dump(mode="json") for item in items]


READS: dict[str, BeliefRead] = {
    "show": BeliefRead(
        "show every field of a belief",
        lambda store, belief_id: store.get(belief_id),
        "",
        Belief.model_validate,
        lambda _, belief: belief_detail(belief),
        _dump,
    ),
    "history": BeliefRead(
        "show a belief's change log",
        lambda store, belief_id: store.history(belief_id),
        "/history",
        lambda data: [HistoryEvent.model_validate(e) for e in data],
        history_lines,
        _dumps,
    ),
    "chain": BeliefRead(
        "show the supersession chain a belief belongs to, oldest first",
        lambda store, belief_id: store.chain(belief_id),
        "/chain",
        _beliefs,
        lambda _, chain: chain_lines(chain),
        _dumps,
    ),
}


def _read(args: argparse.Namespace, settings: Settings) -> int:
    read: BeliefRead = args.read
    found = _backend(
        settings,
        args,
        lambda store: read.local(store, args.id),
        lambda api: read.model(api.get(f"/api/beliefs/{_quoted(args.id)}{read.path}")),
    )
    if args.json:
        _print_json(read.as_json(found))
    else:
        _print(read.text(args.id, found))
    return 0


def _changed(args: argparse.Namespace, belief: Belief, message: str) -> int:
    if args.json:
        _print_json(_dump(belief))
    else:
        _print([f"{message} {belief.id} ({belief.canonical_name})"])
    return 0


def _set_pin(args: argparse.Namespace, settings: Settings, pinned: bool) -> int:
    belief = _backend(
        settings,
        args,
        lambda store: store.pin(args.id, pinned),
        lambda api: Belief.model_validate(
            api.send("PATCH", f"/api/beliefs/{_quoted(args.id)}", {"pinned": pinned})
        ),
    )
    return _changed(args, belief, "pinned" if pinned else "unpinned")


def _pin(args: argparse.Namespace, settings: Settings) -> int:
    return _set_pin(args, settings, True)


def _unpin(args: argparse.Namespace, settings: Settings) -> int:
    return _set_pin(args, settings, False)


def _set_shared(args: argparse.Namespace, settings: Settings, shared: bool) -> int:
    action = "share" if shared else "unshare"
    belief = _backend(
        settings,
        args,
        lambda store: store.share(args.id, shared),
        lambda api: Belief.model_validate(
            api.send("POST", f"/api/beliefs/{_quoted(args.id)}/{action}")
        ),
    )
    return _changed(args, belief, f"{action}d")


def _share(args: argparse.Namespace, settings: Settings) -> int:
    return _set_shared(args, settings, True)


def _unshare(args: argparse.Namespace, settings: Settings) -> int:
    return _set_shared(args, settings, False)


def _delete(args: argparse.Namespace, settings: Settings) -> int:
    path = f"/api/beliefs/{_quoted(args.id)}"
    if not args.hard:
        belief = _backend(
            settings,
            args,
            lambda store: store.soft_delete(args.id),
            lambda api: Belief.model_validate(api.send("DELETE", path)["belief"]),
        )
        return _changed(args, belief, "deleted (restorable)")

    def local(store: BeliefStore) -> str:
        name = store.get(args.id).canonical_name
        store.hard_delete(args.id)
        return name

    def remote(api: ApiClient) -> str:
        return str(api.send("POST", f"{path}/purge", None, hard=True)["canonical_name"])

    name = _backend(settings, args, local, remote)
    if args.json:
        _print_json({"deleted": args.id, "hard": True})
    else:
        _print([f"deleted {args.id} ({name}) for good; its history is kept"])
    return 0


def _restore(args: argparse.Namespace, settings: Settings) -> int:
    belief = _backend(
        settings,
        args,
        lambda store: store.restore(args.id),
        lambda api: Belief.model_validate(
            api.send("POST", f"/api/beliefs/{_quoted(args.id)}/restore")
        ),
    )
    return _changed(args, belief, "restored")


def _quoted(belief_id: str) -> str:
    return urllib.parse.quote(belief_id, safe="")


def _verify_report(store: BeliefStore) -> dict[str, Any]:
    from beliefs.store.tallies import verify_report

    return verify_report(store)
