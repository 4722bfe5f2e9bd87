"""Merge and upkeep decisions as pure functions: sources in, the new belief or the action out."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from beliefs.model.models import Belief, EpistemicStatus, dedupe_names, union_names
from beliefs.text.query import normalize_name
from compaction.plan import Upkeep

PROMOTE_AFTER_REINFORCEMENTS = 5
PROMOTE_AFTER = timedelta(hours=48)
EDIT_EVENTS = frozenset({"updated", "user_correction", "enriched"})
_STATUS_ORDER: tuple[EpistemicStatus, ...] = ("active", "inferred", "exploratory")


def operator_edited(belief: Belief) -> bool:
    """Marked user_edited, or written by the operator and changed by them since (needs history)."""
    if belief.user_edited:
        return True
    return belief.source_type == "operator" and any(
        e.event in EDIT_EVENTS and e.actor in (None, "operator") for e in belief.change_log
    )


def survivor_id(source_ids: Iterable[str]) -> str:
    """Deterministic, so a dry run names the belief a real run then creates."""
    digest = hashlib.sha256("|".join(sorted(source_ids)).encode()).hexdigest()
    return f"b-{digest[:16]}"


def primary(sources: Sequence[Belief]) -> Belief:
    """The source whose wording leads: pinned, most trusted, most reinforced, oldest."""
    return sorted(
        sources,
        key=lambda b: (-int(b.pinned), -b.trust, -b.reinforcement_count, b.created_at, b.id),
    )[0]


def first_seen(belief: Belief) -> datetime:
    raw = belief.provenance.get("first_seen")
    if isinstance(raw, str):
        try:
            return min(datetime.fromisoformat(raw), belief.created_at)
        except ValueError:
            pass
    return belief.created_at


def merged_belief(
    sources: Sequence[Belief],
    *,
    now: datetime,
    reason: str,
    canonical_name: str | None = None,
    content: str | None = None,
    why_it_matters: str | None = None,
) -> Belief:
    """The new belief that supersedes every source.

    Every retired canonical name is kept as an alias (first, so the alias cap never drops
    one), aliases and rejected alternatives are unioned, reinforcement counts summed, and the
    pin kept if any source was pinned.

    Raises:
        ValueError: the sources are fewer than two or the result is not a valid belief.
    """
    if len(sources) < 2:
        raise ValueError("a merge needs at least two beliefs")
    lead = primary(sources)
    ordered = [lead, *(s for s in sources if s.id != lead.id)]
    name = canonical_name or lead.canonical_name
    probe = Belief(user_id=lead.user_id, canonical_name=name)  # normalises the name
    own = normalize_name(probe.canonical_name)
    retired = [s.canonical_name for s in ordered if normalize_name(s.canonical_name) != own]
    aliases: list[str] = []
    for names in (retired, *(s.aliases for s in ordered)):
        aliases = union_names(aliases, [n for n in names if normalize_name(n) != own])
    statuses = {s.epistemic_status for s in sources}
    status: EpistemicStatus = next((s for s in _STATUS_ORDER if s in statuses), "active")
    deliveries = {s.delivery for s in sources}
    delivery = "always" if "always" in deliveries else lead.delivery
    expiries = [s.expires_at for s in sources]
    provenance: dict[str, Any] = {
        "merged_from": [s.id for s in ordered],
        "merged_at": now.isoformat(),
        "reason": reason,
        "first_seen": min(first_seen(s) for s in sources).isoformat(),
    }
    return Belief(
        id=survivor_id(s.id for s in sources),
        user_id=lead.user_id,
        agent_id=lead.agent_id,
        type=lead.type,
        subtype=lead.subtype or next((s.subtype for s in ordered if s.subtype), None),
        canonical_name=probe.canonical_name,
        aliases=aliases,
        rejected_alternatives=dedupe_names([r for s in ordered for r in s.rejected_alternatives]),
        content=(content or lead.content).strip(),
        why_it_matters=(why_it_matters or lead.why_it_matters or _first_why(ordered)).strip(),
        scope=list(lead.scope),
        epistemic_status=status,
        confidence=max(s.confidence for s in sources),
        pinned=any(s.pinned for s in sources),
        memory_class=lead.memory_class
        or next((s.memory_class for s in ordered if s.memory_class), None),
        delivery=delivery,
        review_state="confirmed"
        if any(s.review_state == "confirmed" for s in sources)
        else "pending",
        source_type=max(sources, key=lambda s: s.trust).source_type,
        participants=dedupe_names([p for s in ordered for p in s.participants]),
        reinforcement_count=sum(s.reinforcement_count for s in sources),
        last_reinforced_at=max(
            (s.last_reinforced_at for s in sources if s.last_reinforced_at), default=None
        ),
        created_at=now,
        updated_at=now,
        expires_at=None if any(e is None for e in expiries) else max(e for e in expiries if e),
        provenance=provenance,
    )


def _first_why(sources: Sequence[Belief]) -> str:
    return next((s.why_it_matters for s in sources if s.why_it_matters), "")


def should_promote(belief: Belief, now: datetime) -> bool:
    """Inferred becomes active after 5 reinforcements and 48 hours since first seen."""
    return (
        belief.epistemic_status == "inferred"
        and belief.reinforcement_count >= PROMOTE_AFTER_REINFORCEMENTS
        and now - first_seen(belief) >= PROMOTE_AFTER
        and belief.review_state != "rejected"
    )


def upkeep(beliefs: Iterable[Belief], *, now: datetime, grace: timedelta) -> list[Upkeep]:
    """Purge soft-deleted rows past the grace window, expire, promote (every row of a user)."""
    out: list[Upkeep] = []
    for b in sorted(beliefs, key=lambda b: (b.created_at, b.id)):
        if b.deleted_at is not None:
            if b.deleted_at <= now - grace:
                hours = grace.total_seconds() / 3600
                out.append(Upkeep("purge", b.id, f"deleted more than {hours:g} h ago"))
        elif not b.is_live:
            continue
        elif b.expires_at is not None and b.expires_at <= now:
            out.append(Upkeep("expire", b.id, f"expired at {b.expires_at.isoformat()}"))
        elif should_promote(b, now):
            out.append(
                Upkeep(
                    "promote",
                    b.id,
                    f"reinforced {b.reinforcement_count} times over at least 48 hours",
                )
            )
    return out
