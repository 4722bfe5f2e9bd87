"""The extraction prompt: a pure function of the turn, the beliefs it touched and its scope."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from beliefs.models import Belief
from beliefs.render import strip_injected
from extractor.redact import redact, redact_value
from extractor.turn import Turn

MAX_MESSAGE_CHARS = 12_000
MAX_TOOL_CHARS = 2_000
LONG_CODE_LINES = 25

SYSTEM = """\
You keep the long-term memory of an AI assistant. Read one conversation turn and write down what \
is worth remembering about the user for future conversations: their preferences, the entities in \
their world (projects, tools, people), the decisions they made together with the alternatives \
they rejected, relations between these, and questions they left open.

Rules:
- Only durable things the user stated or clearly showed. Not small talk, not one-off task \
details, not facts from pasted documents, logs or code the user shared as reference material, \
not the assistant's own suggestions unless the user accepted them.
- Never copy secrets (keys, tokens, passwords); they appear as [REDACTED] and must not be stored.
- canonical_name: short snake_case subject, e.g. database_driver. If a known belief covers the \
same subject, do not create a new belief: write a belief_update for it (reinforced, enriched, \
superseded or contradicted), naming it by belief_id AND canonical_name.
- superseded: the user clearly replaced an earlier belief (e.g. switched tools); give \
new_content. contradicted: the turn conflicts with a known belief and it is unclear which holds.
- why_it_matters: ONE imperative sentence about what future answers it shapes, e.g. "Write \
examples for strict-mode TypeScript with no implicit any."
- aliases: short forms (1-2 words) the user may use later (abbreviations, nicknames, product \
names). rejected_alternatives: names of the options the user ruled out, e.g. ["mongoose"].
- entity_updates: new short names the user used for a known belief.
- resolved_open_questions: ids or canonical names of known open questions the turn settled.
- confidence: 0.9 stated, 0.6 implied, below 0.35 a guess (dropped).
- Nothing worth remembering: return empty lists.

Reply with one JSON object only, matching the response schema, no prose, no code fences."""


def build_messages(
    turn: Turn, touched_beliefs: Sequence[Belief], scope: Sequence[str]
) -> list[dict[str, Any]]:
    """The chat messages for one extraction call; the turn is stripped of memory and redacted."""
    known = [_project(b) for b in touched_beliefs]
    sections = [
        f"Scope of this conversation: {', '.join(scope) or 'user:universal'}",
        "Known beliefs (JSON lines):\n"
        + ("\n".join(json.dumps(k, ensure_ascii=False) for k in known) if known else "(none)"),
        "The turn:",
        f"<user>\n{_clean(turn.user_message)}\n</user>",
        f"<assistant>\n{_clean(turn.assistant_message)}\n</assistant>",
    ]
    if turn.tool_calls:
        calls = json.dumps(redact_value(turn.tool_calls), ensure_ascii=False)
        sections.append(f"<tool_calls>\n{_clip(calls, MAX_TOOL_CHARS)}\n</tool_calls>")
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "\n\n".join(sections)},
    ]


def _project(belief: Belief) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": belief.id,
        "canonical_name": belief.canonical_name,
        "type": belief.type,
        "content": belief.content,
    }
    if belief.aliases:
        out["aliases"] = belief.aliases
    if belief.rejected_alternatives:
        out["rejected_alternatives"] = belief.rejected_alternatives
    if belief.epistemic_status != "active":
        out["status"] = belief.epistemic_status
    out["scope"] = belief.scope
    return out


_FENCE = re.compile(r"```[^\n]*\n([\s\S]*?)```")


def _clean(text: str) -> str:
    # Never extract from what memory injected (no echo loops), nor keep a secret.
    text = redact(strip_injected(text))
    text = _FENCE.sub(_fold_long_code, text)
    return _clip(text.strip(), MAX_MESSAGE_CHARS)


def _fold_long_code(match: re.Match[str]) -> str:
    # Long pasted code is reference material, not something the user said about themselves.
    lines = match.group(1).count("\n")
    return match.group(0) if lines <= LONG_CODE_LINES else f"[code block of {lines} lines omitted]"


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters omitted ...]\n{text[-half:]}"
