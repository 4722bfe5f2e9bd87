"""The `sources` memory tool: the documents ingested into the caller's scopes, so an agent
knows what `recall` can find and cite. It takes the store and its thread, nothing more."""

from __future__ import annotations

from typing import Any

from beliefs.context.assembly import covering
from beliefs.documents import list_sources
from beliefs.store.async_store import AsyncStore
from proxy.mcp.args import SourcesArgs
from proxy.mcp.caller import Caller, Outcome, scopes_of


async def list_documents(store: AsyncStore, caller: Caller, args: SourcesArgs) -> Outcome:
    scopes = scopes_of(caller, args.scope)
    allowed = covering(scopes) if scopes else None
    found = await store.apply(list_sources, caller.identity.user_id, include_deleted=False)
    shown: list[dict[str, Any]] = [
        {
            "scope": s.scope,
            "file": s.path,
            "passages": s.passages,
            "ingested_at": s.ingested_at.isoformat(),
            "cite_as": f"- {s.scope}: {s.path} › <heading>",
        }
        for s in found
        if allowed is None or s.scope in allowed
    ]
    note = {} if shown else {"note": "no documents in these scopes"}
    return Outcome({"sources": shown, **note}, f"{len(shown)} source(s)", [])
