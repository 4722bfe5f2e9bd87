"""The extraction prompt: a pure function of the turn, the beliefs it touched and its scope."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from beliefs.model_view import ViewField, model_view
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
- Only durable things the user stated or clearly showed. Not small talk, greetings or thanks, not \
one-off task details, not facts from pasted documents, logs or code the user shared as reference \
material, not the assistant's own suggestions unless the user accepted them.
- Never copy secrets (keys, tokens, passwords); they appear as [REDACTED] and must not be stored.
- Write every value from this turn's own words. The worked example below is about someone else: \
never reuse its names, sentences or aliases.
- canonical_name: a short snake_case subject. If a known belief covers the same subject, do not \
create a new belief: write a belief_update for it (reinforced, enriched, superseded or \
contradicted), naming it by belief_id AND canonical_name.
- superseded: the user clearly replaced an earlier belief (switched tools, changed their mind); \
give new_content. contradicted: the turn conflicts with a known belief and it is unclear which \
holds.
- why_it_matters: ONE imperative sentence telling a future assistant what to do differently \
because of this belief.
- aliases: short forms (1-2 words) the user may use later for the same subject. \
rejected_alternatives: the names of the options the user ruled out.
- entity_updates: new short names the user used for a known belief.
- resolved_open_questions: only when the user's words in this turn settle a known open_question: \
give its id and quote those words exactly. Otherwise leave it empty.
- confidence: 0.9 stated, 0.6 implied, below 0.35 a guess (dropped).
- Nothing worth remembering (small talk, a one-off question): return empty lists.

Reply with one JSON object only, matching the response schema, no prose, no code fences."""

_EMPTY: dict[str, list[Any]] = {
    "new_beliefs": [],
    "belief_updates": [],
    "entity_updates": [],
    "resolved_open_questions": [],
}

# One complete worked example (a subject far from any user's) and one turn of small talk.
_EXAMPLE_TURN = (
    "I'm writing my cookbook for readers in Europe, so every recipe uses grams and millilitres "
    "only: no cups, no ounces. I just call it the book.",
    "Understood: metric quantities throughout the book.",
)
_EXAMPLE_OUTPUT: dict[str, Any] = {
    **_EMPTY,
    "new_beliefs": [
        {
            "type": "entity",
            "canonical_name": "cookbook_project",
            "content": "Is writing a cookbook for readers in Europe.",
            "why_it_matters": "Treat recipes and food writing as work for this cookbook.",
            "aliases": ["the book", "cookbook"],
            "rejected_alternatives": [],
            "confidence": 0.9,
        },
        {
            "type": "decision",
            "canonical_name": "cookbook_units",
            "content": "Uses metric units only in the cookbook: grams and millilitres.",
            "why_it_matters": "Give every quantity in grams or millilitres; never in cups or "
            "ounces.",
            "aliases": ["metric units"],
            "rejected_alternatives": ["cups", "ounces"],
            "confidence": 0.9,
        },
    ],
}
_SMALL_TALK_TURN = ("thanks, that's all for today! have a nice evening", "You too, bye!")
# What a model could copy from the examples instead of extracting (the evaluation looks for it).
EXAMPLE_NAMES = frozenset(b["canonical_name"] for b in _EXAMPLE_OUTPUT["new_beliefs"])
EXAMPLE_TEXTS: tuple[str, ...] = (
    *_EXAMPLE_TURN,
    *(
        text
        for b in _EXAMPLE_OUTPUT["new_beliefs"]
        for text in (b["content"], b["why_it_matters"], *b["aliases"])
    ),
)


def build_messages(
    turn: Turn, touched_beliefs: Sequence[Belief], scope: Sequence[str]
) -> list[dict[str, Any]]:
    """The chat messages for one extraction call: the rules, the worked examples, then the turn
    (stripped of memory and redacted)."""
    known = [_project(b) for b in touched_beliefs]
    sections = _sections(
        scope,
        known,
        _clean(turn.user_message),
        _clean(turn.assistant_message),
    )
    if turn.tool_calls:
        calls = json.dumps(redact_value(turn.tool_calls), ensure_ascii=False)
        sections.append(f"<tool_calls>\n{_clip(calls, MAX_TOOL_CHARS)}\n</tool_calls>")
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "\n\n".join(_sections(["domain:cooking"], [], *_EXAMPLE_TURN))},
        {"role": "assistant", "content": json.dumps(_EXAMPLE_OUTPUT, ensure_ascii=False)},
        {
            "role": "user",
            "content": "\n\n".join(_sections(["domain:cooking"], [], *_SMALL_TALK_TURN)),
        },
        {"role": "assistant", "content": json.dumps(_EMPTY)},
        {"role": "user", "content": "\n\n".join(sections)},
    ]


def _sections(
    scope: Sequence[str], known: Sequence[dict[str, Any]], user: str, assistant: str
) -> list[str]:
    return [
        f"Scope of this conversation: {', '.join(scope) or 'user:universal'}",
        "Known beliefs (JSON lines):\n"
        + ("\n".join(json.dumps(k, ensure_ascii=False) for k in known) if known else "(none)"),
        "The turn:",
        f"<user>\n{user}\n</user>",
        f"<assistant>\n{assistant}\n</assistant>",
    ]


# What the model is shown of a known belief; aliases, rejected alternatives and a status other
# than active only when the belief has them.
KNOWN_VIEW: tuple[ViewField, ...] = (
    "id",
    "canonical_name",
    "type",
    "content",
    "aliases",
    "rejected_alternatives",
    "status",
    "scope",
)


def _project(belief: Belief) -> dict[str, Any]:
    return model_view(belief, KNOWN_VIEW, when_set=("aliases", "rejected_alternatives", "status"))


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
