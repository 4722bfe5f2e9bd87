"""`tenure persona show | regenerate | set TEXT`: the prelude injected before every answer."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from typing import Any

from beliefs.context.assembly import MAX_PERSONA_CHARS
from beliefs.model.errors import BeliefError
from beliefs.store.belief_store import BeliefStore
from beliefs.store.thread import StoreThread
from compaction import deterministic_text, inputs_hash, persona_inputs
from proxy.cli.api_client import ApiClient
from proxy.cli.backend import with_backend
from proxy.runtime import compaction_parts
from proxy.settings import Settings


def register(subparsers: Any) -> None:
    group = subparsers.add_parser("persona", help="show, regenerate or set a user's persona")
    sub = group.add_subparsers(title="persona commands", metavar="COMMAND", required=True)
    user = argparse.ArgumentParser(add_help=False)
    user.add_argument("--user", help="the user id (default: TENURE_DEFAULT_USER)")
    user.add_argument("--json", action="store_true", help="print JSON")
    cmd = sub.add_parser("show", parents=[user], help="print the persona and whether it is stale")
    cmd.set_defaults(handler=_show)
    cmd = sub.add_parser(
        "regenerate", parents=[user], help="make it again now (never replaces an operator one)"
    )
    cmd.set_defaults(handler=_regenerate)
    cmd = sub.add_parser("set", parents=[user], help="set it by hand (generation then keeps it)")
    cmd.add_argument("text", help="the persona, second person, e.g. 'You prefer short answers.'")
    cmd.set_defaults(handler=_set)


def _show(args: argparse.Namespace, settings: Settings) -> int:
    user = args.user or settings.default_user

    def local(store: BeliefStore) -> dict[str, Any]:
        inputs = persona_inputs(store.index.records(user))
        stored = store.get_persona(user)
        if stored is None:
            return {"user_id": user, "text": deterministic_text(inputs), "stored": False}
        stale = stored.source != "operator" and stored.inputs_hash != inputs_hash(inputs)
        return {**stored.model_dump(mode="json"), "stored": True, "stale": stale}

    return _print(args, _with_store(settings, local, lambda c: c.get("/api/persona", user=user)))


def _regenerate(args: argparse.Namespace, settings: Settings) -> int:
    user = args.user or settings.default_user

    def local(store: BeliefStore) -> dict[str, Any]:
        async def go() -> dict[str, Any]:
            thread = StoreThread(store)
            parts = compaction_parts(settings, thread)
            try:
                persona = await parts.persona.refresh(user, force=True)
            finally:
                if parts.own_llm is not None:
                    await parts.own_llm.aclose()
                thread.close()
            if persona is None:
                raise BeliefError(f"no persona could be made for user {user!r}")
            return {**persona.model_dump(mode="json"), "stored": True, "stale": False}

        return asyncio.run(go())

    def remote(client: ApiClient) -> Any:
        return client.send("POST", "/api/persona/regenerate", None, user=user)

    persona = _with_store(settings, local, remote)
    if persona.get("source") == "operator":
        print(
            f"note: the persona of {user} was set by hand and regeneration keeps it: nothing "
            "changed (`tenure persona set` replaces it)",
            file=sys.stderr,
        )
    return _print(args, persona)


def _set(args: argparse.Namespace, settings: Settings) -> int:
    user = args.user or settings.default_user
    text = args.text.strip()
    if not text:
        raise BeliefError("the persona text is empty; pass the text to set")
    if len(text) > MAX_PERSONA_CHARS:
        raise BeliefError(
            f"the persona is {len(text)} characters; at most {MAX_PERSONA_CHARS} are injected"
        )

    def local(store: BeliefStore) -> dict[str, Any]:
        persona = store.set_persona(user, text, source="operator")
        return {**persona.model_dump(mode="json"), "stored": True, "stale": False}

    def remote(client: ApiClient) -> Any:
        return client.send("PUT", "/api/persona", {"text": text}, user=user)

    return _print(args, _with_store(settings, local, remote, create=True))


def _with_store(
    settings: Settings,
    local: Callable[[BeliefStore], dict[str, Any]],
    remote: Callable[[ApiClient], Any],
    *,
    create: bool = False,
) -> dict[str, Any]:
    result: dict[str, Any] = with_backend(settings, local, remote, timeout=120, create=create)
    return result


def _print(args: argparse.Namespace, persona: dict[str, Any]) -> int:
    if args.json:
        json.dump(persona, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    if not persona.get("stored"):
        source = "not stored yet: the deterministic summary"
    else:
        source = persona.get("source", "?")
        if persona.get("stale"):
            source += ", stale: its beliefs changed; regenerated in the background"
    print(f"persona of {persona['user_id']} ({source}):")
    print(persona["text"] or "(empty: no universal preferences yet)")
    return 0
