"""What the memory tools read (recall, listings, persona, pinned set) and where they write.

Reads come from the store's in-memory index; writes (`proxy.mcp.writes`) run on the store
thread, the one writer.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from beliefs.context.assembly import in_scopes
from beliefs.context.recall import recall
from beliefs.documents.retrieval import cited, finder_for
from beliefs.model.models import utcnow
from beliefs.model.record import AnyBelief
from beliefs.store.async_store import AsyncStore
from compaction import PersonaKeeper
from proxy.gateway.chat_commands import ChatStates
from proxy.gateway.delivery import build_context, context_request
from proxy.gateway.identity import UNIVERSAL, Identity
from proxy.mcp.args import BeliefsArgs, ForgetArgs, OpenQuestionsArgs, RecallArgs, RememberArgs
from proxy.mcp.caller import Caller, Outcome, belief_view, scopes_of, visible_to
from proxy.mcp.writes import forget, remember
from proxy.security.grants import scope_allowed
from proxy.settings import Settings

log = logging.getLogger("tenure.mcp")


@dataclass(frozen=True)
class MemoryTools:
    settings: Settings
    store: AsyncStore
    persona: PersonaKeeper
    chat_states: ChatStates | None = None

    def caller(
        self,
        identity: Identity,
        transport: Literal["http", "stdio"],
        client: str | None,
        patterns: tuple[str, ...] = (),
    ) -> Caller:
        """Add the scopes set with `!scope` (those within a client token's scope `patterns`)
        and the configured defaults, as the gateway does."""
        state_scopes: Sequence[str] = ()
        if self.chat_states is not None:
            state_scopes = self.chat_states.get(identity.user_id, identity.agent_id).scopes
        if patterns:
            state_scopes = [s for s in state_scopes if scope_allowed(s, patterns)]
        scoped = identity.scoped(state_scopes, self.settings.default_scopes)
        return Caller(scoped, transport, client, patterns)

    # -- reads ---------------------------------------------------------------------------------

    def recall(self, caller: Caller, args: RecallArgs) -> Outcome:
        scopes = scopes_of(caller, args.scope)
        hits = recall(
            self.store.index,
            caller.identity.user_id,
            args.query,
            scopes=(*scopes, UNIVERSAL) if scopes else (),
            agent_id=caller.identity.agent_id,
            limit=args.limit,
            rules=self.store.rules,
        )
        user, limit = caller.identity.user_id, args.limit  # passages come after memory
        hits += finder_for(self.store.store).recall(user, args.query, scopes=scopes, limit=limit)
        now = utcnow()
        found = [
            {**belief_view(h.hit.belief, now), "score": round(h.hit.score, 3), **cited(h.hit)}
            for h in hits
            if visible_to(h.hit.belief, caller)
        ]
        note = "" if found else "nothing remembered matches; try other names or a wider scope"
        return Outcome(
            {"hits": found, **({"note": note} if note else {})},
            f"{len(found)} hit(s)",
            [h["id"] for h in found],
        )

    def beliefs(self, caller: Caller, args: BeliefsArgs) -> Outcome:
        live = self._listed(caller, args.scope)
        live.sort(key=lambda b: (b.updated_at, b.id), reverse=True)
        now = utcnow()
        shown = [belief_view(b, now) for b in live[: args.limit]]
        return Outcome(
            {"beliefs": shown, "total": len(live)},
            f"{len(shown)} of {len(live)} belief(s)",
            [b["id"] for b in shown],
        )

    def open_questions(self, caller: Caller, args: OpenQuestionsArgs) -> Outcome:
        now = utcnow()
        open_ = [
            belief_view(b, now)
            for b in self._listed(caller, args.scope)
            if b.type == "open_question" and b.resolved_at is None
        ]
        return Outcome(
            {"open_questions": open_}, f"{len(open_)} open question(s)", [b["id"] for b in open_]
        )

    def persona_text(self, caller: Caller) -> str:
        text, _ = self.persona.persona_for(caller.identity.user_id)
        return text

    def pinned(self, caller: Caller) -> list[dict[str, Any]]:
        """The pinned beliefs a request with this identity receives on every turn."""
        identity = caller.identity
        request = context_request(
            self.settings,
            user_id=identity.user_id,
            scopes=identity.scopes,
            agent_id=identity.agent_id,
            query="",
            model="gpt-4o",
        )
        text, covers = self.persona.persona_for(identity.user_id)
        context = build_context(self.store.store, request, text, covers)
        now = utcnow()
        return [belief_view(b, now) for b in context.pinned]

    def _listed(self, caller: Caller, raw_scope: str | None) -> list[AnyBelief]:
        scopes = scopes_of(caller, raw_scope)
        allowed = (*scopes, UNIVERSAL) if scopes else ()
        return [
            b
            for b in self.store.index.records(caller.identity.user_id)
            if b.is_live and visible_to(b, caller) and (not allowed or in_scopes(b, allowed))
        ]

    # -- writes (on the store thread) ----------------------------------------------------------

    async def remember(self, caller: Caller, args: RememberArgs, call_id: str) -> Outcome:
        confirm = self.settings.always_write_confirm
        return await self.store.apply(remember, caller, args, call_id, utcnow(), confirm)

    async def forget(self, caller: Caller, args: ForgetArgs, call_id: str) -> Outcome:
        outcome = await self.store.apply(forget, caller, args, call_id)
        # The next turn must not carry it in a stale persona either: regenerate now (this
        # returns at once when the belief was not one of the persona's inputs).
        try:
            await self.persona.refresh(caller.identity.user_id)
        except Exception:
            log.exception("persona refresh after forgetting %s failed", outcome.belief_ids)
        return outcome
