"""Plain-text views of beliefs for the terminal (the `--json` variants print models instead)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from beliefs.context.render import clip
from beliefs.model.models import Belief, HistoryEvent

MAX_LISTED_CONTENT = 80  # a listing line stays readable; `beliefs show` has the whole text


def when(value: datetime | None, *, precise: bool = False) -> str:
    if value is None:
        return "-"
    if precise or value.hour or value.minute or value.second:
        return value.strftime("%Y-%m-%d %H:%M")
    return value.strftime("%Y-%m-%d")


def state(belief: Belief) -> str:
    if belief.deleted_at is not None:
        return f"deleted {when(belief.deleted_at)}"
    if belief.superseded_by is not None:
        return f"superseded by {belief.superseded_by}"
    return belief.epistemic_status


def belief_table(beliefs: Sequence[Belief]) -> list[str]:
    """One line per belief, columns aligned, ending with its content (clipped)."""
    rows = [
        (
            b.id,
            b.type,
            b.canonical_name,
            ",".join(b.scope),
            state(b) + (" pinned" if b.pinned else ""),
            clip(b.content, MAX_LISTED_CONTENT),
        )
        for b in beliefs
    ]
    if not rows:
        return ["no beliefs match"]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = [
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r[:5])) + "  " + r[5] for r in rows
    ]
    lines.append(f"{len(rows)} belief{'s' if len(rows) != 1 else ''}")
    return lines


def belief_detail(belief: Belief) -> list[str]:
    lines = [f"{belief.id}  {belief.canonical_name}  ({state(belief)})"]
    data = belief.model_dump(mode="json", exclude={"id", "canonical_name", "change_log"})
    width = max(len(k) for k in data)
    for key, value in data.items():
        if value in (None, [], {}, ""):
            continue
        shown = ", ".join(map(str, value)) if isinstance(value, list) else value
        if isinstance(shown, dict):
            shown = json.dumps(shown, ensure_ascii=False, sort_keys=True)
        lines.append(f"  {key.ljust(width)}  {shown}")
    count = len(belief.change_log)
    lines.append(f"  {len(belief.change_log)} history event{'s' if count != 1 else ''}")
    return lines


def history_lines(belief_id: str, events: Sequence[HistoryEvent]) -> list[str]:
    lines = [f"history of {belief_id} ({len(events)} events, oldest first):"]
    for event in events:
        actor = f" by {event.actor}" if event.actor else ""
        detail = json.dumps(event.detail, ensure_ascii=False, sort_keys=True, default=str)
        lines.append(
            f"  {when(event.at, precise=True)}  {event.event}{actor}"
            + (f"  {detail}" if event.detail else "")
        )
    return lines


def chain_lines(chain: Sequence[Belief]) -> list[str]:
    """Oldest -> newest with arrows, creation dates and why each link was retired."""
    by_id = {b.id: b for b in chain}
    lines = [" → ".join(b.id for b in chain), ""]
    for position, belief in enumerate(chain):
        arrow = "  " if position == 0 else "→ "
        lines.append(
            f"{arrow}{belief.id}  {belief.canonical_name}  created {when(belief.created_at)}"
        )
        if belief.content:
            lines.append(f"    {belief.content}")
        if belief.superseded_by is not None:
            successor = by_id.get(belief.superseded_by)
            ended = belief.invalidated_at or (successor.created_at if successor else None)
            reason = f": {belief.invalidation_reason}" if belief.invalidation_reason else ""
            lines.append(f"    superseded by {belief.superseded_by} on {when(ended)}{reason}")
        elif belief.deleted_at is not None:
            lines.append(f"    deleted {when(belief.deleted_at)}")
        else:
            lines.append(f"    current ({belief.epistemic_status})")
    return lines
