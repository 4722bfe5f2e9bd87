"""Always-on writes held back for the user: with `TENURE_ALWAYS_WRITE_CONFIRM` a belief the
extractor would make always-on (a replacement inheriting a pin, say) is written as retrieved,
and its history says what was asked and how the user can grant it."""

from __future__ import annotations

from dataclasses import dataclass, replace

from beliefs.model.models import Belief
from beliefs.store.belief_store import BeliefStore
from extractor.plan import Plan

REASON = (
    "always-on writes need the user's confirmation (TENURE_ALWAYS_WRITE_CONFIRM): written as "
    "retrieved; pin it on its page in the UI or with `tenure beliefs pin {id}`"
)


@dataclass(frozen=True)
class Held:
    """A plan with no always-on belief left in it, and the beliefs it asked that of."""

    plan: Plan
    asked: tuple[Belief, ...] = ()

    def record(self, store: BeliefStore, actor: str) -> None:
        """One `always_on_refused` event per held-back belief (they are written by now)."""
        for b in self.asked:
            store.refuse_always_on(
                b.id,
                {"pinned": b.pinned, "delivery": b.delivery},
                actor=actor,
                reason=REASON.format(id=b.id),
            )


def hold_always_on(plan: Plan, confirm: bool) -> Held:
    """With `confirm`, the plan's new beliefs (created or replacing) unpinned and retrieved
    where they asked to be always-on; without it, the plan as it is."""
    if not confirm:
        return Held(plan)
    asked = [b for b in plan.creates if b.always_on]
    asked += [s.replacement for s in plan.supersessions if s.replacement.always_on]
    if not asked:
        return Held(plan)
    held = replace(
        plan,
        creates=[_retrieved(b) for b in plan.creates],
        supersessions=[
            replace(s, replacement=_retrieved(s.replacement)) for s in plan.supersessions
        ],
    )
    return Held(held, tuple(asked))


def _retrieved(belief: Belief) -> Belief:
    if not belief.always_on:
        return belief
    return belief.model_copy(update={"pinned": False, "delivery": "retrieved"})
