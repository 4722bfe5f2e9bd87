"""How memory is delivered: one place that turns settings and a caller into a context.

The proxy's per-request memory and the prompt preview both build their context here, so the
preview shows exactly what a request would receive.
"""

from __future__ import annotations

from beliefs.context.assembly import ContextRequest, assemble
from beliefs.context.layers import Context
from beliefs.context.tokens import token_counter
from beliefs.documents.retrieval import finder_for
from beliefs.search.deadline import Deadline
from beliefs.store.belief_store import BeliefStore
from proxy.gateway.context_windows import memory_budget
from proxy.settings import Settings


def context_request(
    settings: Settings,
    *,
    user_id: str,
    scopes: tuple[str, ...],
    agent_id: str | None,
    query: str,
    model: str,
) -> ContextRequest:
    """The request for `assemble` under the delivery settings (caps, budget, gates)."""
    return ContextRequest(
        user_id=user_id,
        scopes=scopes,
        query=query,
        agent_id=agent_id,
        max_beliefs=settings.max_beliefs,
        token_budget=memory_budget(
            model, floor_tokens=settings.budget_floor_tokens, pct=settings.budget_pct
        ),
        curated=settings.curated_mode,
        min_trust=settings.inject_min_trust,
        inject_scopes=settings.inject_scopes,
    )


def build_context(
    store: BeliefStore,
    request: ContextRequest,
    persona: str,
    covers: frozenset[str] | None = None,
    deadline: Deadline | None = None,
) -> Context:
    """Assemble from the in-memory index with the store's rules and real token counts.

    `covers`: the universal pinned beliefs the persona carries (None: all of them);
    `deadline`: when the search ranks what it has (None: a complete search, as the preview's).
    """
    return assemble(
        store.index,
        request,
        persona=persona,
        count_tokens=token_counter(),
        rules=store.rules,
        persona_covers=covers,
        deadline=deadline,
        contested=store.contested,
        passages=finder_for(store).for_turn,
    )
