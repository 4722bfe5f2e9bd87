"""Answering "what was believed at time T" from row timestamps and delete/restore events."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from beliefs.model.models import Belief, HistoryEvent

Span = tuple[datetime, datetime | None]


def deleted_spans(events: Iterable[HistoryEvent]) -> list[Span]:
    """Intervals [deleted, restored) from a belief's soft delete and restore events."""
    spans: list[Span] = []
    start: datetime | None = None
    for event in sorted(events, key=lambda e: e.at):
        if event.event == "deleted" and start is None:
            start = event.at
        elif event.event == "restored" and start is not None:
            spans.append((start, event.at))
            start = None
    if start is not None:
        spans.append((start, None))
    return spans


def ended_at(belief: Belief, successors: Mapping[str, Belief]) -> datetime | None:
    """When the belief stopped being current: invalidated, expired, or its successor appeared."""
    candidates: list[datetime] = []
    if belief.invalidated_at is not None:
        candidates.append(belief.invalidated_at)
    if belief.expires_at is not None:
        candidates.append(belief.expires_at)
    if belief.superseded_by is not None and belief.invalidated_at is None:
        successor = successors.get(belief.superseded_by)
        candidates.append(successor.created_at if successor else belief.updated_at)
    elif belief.epistemic_status == "superseded" and belief.invalidated_at is None:
        candidates.append(belief.updated_at)
    return min(candidates) if candidates else None


def live_at(
    belief: Belief, at: datetime, successors: Mapping[str, Belief], spans: Sequence[Span]
) -> bool:
    if belief.created_at > at:
        return False
    end = ended_at(belief, successors)
    if end is not None and end <= at:
        return False
    if spans:
        return not any(start <= at and (stop is None or at < stop) for start, stop in spans)
    return belief.deleted_at is None or belief.deleted_at > at


def beliefs_as_of(
    beliefs: Sequence[Belief], at: datetime, events: Mapping[str, Sequence[HistoryEvent]]
) -> list[Belief]:
    """The beliefs live at `at`, each as it read then (later edits and links rolled back)."""
    by_id = {b.id: b for b in beliefs}
    return [
        state_at(b, at, events.get(b.id, ()))
        for b in beliefs
        if live_at(b, at, by_id, deleted_spans(events.get(b.id, ())))
    ]


def state_at(belief: Belief, at: datetime, events: Sequence[HistoryEvent]) -> Belief:
    """Undo what happened to a belief after `at`: field edits, reinforcements, retirement."""
    values = belief.model_dump()
    for event in sorted((e for e in events if e.at > at), key=lambda e: e.at, reverse=True):
        changes = event.detail.get("changes")
        if isinstance(changes, dict):
            for name, change in changes.items():
                if name in values and isinstance(change, dict) and "old" in change:
                    values[name] = change["old"]
        if event.event == "reinforced":
            values["reinforcement_count"] = max(0, values["reinforcement_count"] - 1)
            added = event.detail.get("aliases_added") or []
            values["aliases"] = [a for a in values["aliases"] if a not in added]
    values.update(
        superseded_by=None, invalidated_at=None, invalidation_reason=None, deleted_at=None
    )
    if values["epistemic_status"] == "superseded":
        values["epistemic_status"] = "active"
    if belief.last_reinforced_at is not None and belief.last_reinforced_at > at:
        values["last_reinforced_at"] = None
    values["change_log"] = [e for e in belief.change_log if e.at <= at]
    return Belief.model_validate(values)
