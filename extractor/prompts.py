"""The extraction prompt: a pure function of the turn, the beliefs it touched and its scope."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from beliefs.context.render import strip_injected
from beliefs.model.model_view import ViewField, model_view
from beliefs.model.models import Belief
from extractor.redact import redact_record
from extractor.turn import Turn

MAX_MESSAGE_CHARS = 12_000
MAX_TOOL_CHARS = 2_000
LONG_CODE_LINES = 25

SYSTEM = """\
You keep the long-term memory of an AI assistant. From one conversation turn, write down what \
is worth remembering about the user in future conversations: preferences, entities of their \
world (projects, tools, people), decisions with the options they rejected, relations, and open \
questions.

Rules:
- Only durable things the user stated or clearly showed. Not small talk, thanks, one-off \
questions, pasted documents, logs or code, nor the assistant's suggestions the user did not \
accept. Nothing worth remembering: empty lists.
- Secrets appear as [REDACTED]: never store them.
- Write in your own words from this turn only. The examples are about someone else: never \
reuse their names or sentences.
- If a known belief covers the subject, do not create another: add a belief_update naming its \
belief_id and canonical_name. superseded = the user replaced it: give new_content, \
why_it_matters for the new choice and, in rejected_alternatives, the option it replaced.
- resolved_open_questions: only when the turn's words settle a known open_question.

Reply with one JSON object only, no prose, no code fences."""

_EMPTY: dict[str, list[Any]] = {
    "new_beliefs": [],
    "belief_updates": [],
    "entity_updates": [],
    "resolved_open_questions": [],
}

# One complete worked example (a subject far from any user's) and one turn of small talk.
_EXAMPLE_TURN = (
    "My cookbook is for readers in Europe, so grams and millilitres only, no cups.",
    "Understood: metric throughout.",
)
_EXAMPLE_OUTPUT: dict[str, Any] = {
    **_EMPTY,
    "new_beliefs": [
        {
            "type": "decision",
            "canonical_name": "cookbook_units",
            "content": "Gives every quantity in the European cookbook in metric units.",
            "why_it_matters": "Write recipe quantities in grams or millilitres.",
            "aliases": ["cookbook", "metric units"],
            "rejected_alternatives": ["cups"],
            "confidence": 0.9,
        },
    ],
}
_SMALL_TALK_TURN = ("that's all for today, have a nice evening", "You too!")
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
    return build_batch_messages([turn], touched_beliefs, scope)


def build_batch_messages(
    turns: Sequence[Turn], touched_beliefs: Sequence[Belief], scope: Sequence[str]
) -> list[dict[str, Any]]:
    """The messages for one call over several turns of one conversation, oldest first, under
    the same prefix as a single turn (so a provider's prompt cache still applies)."""
    known = [_project(b) for b in touched_beliefs]
    said = [_said(turn) for turn in turns]
    if len(said) == 1:
        sections = _sections(scope, known, *said[0])
    else:
        # The model answers once for all of them: what holds after the last turn.
        sections = _sections(scope, known, "", "")[:2]
        sections.append(
            f"{len(said)} turns of one conversation, oldest first. Answer once for all of "
            "them; where a later turn corrects an earlier one, keep only what the later says."
        )
        for number, (user, assistant, calls) in enumerate(said, start=1):
            sections.append(f"Turn {number}:")
            sections.extend(_sections(scope, known, user, assistant, calls)[2:])
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "\n".join(_sections(["domain:cooking"], [], *_EXAMPLE_TURN))},
        {"role": "assistant", "content": json.dumps(_EXAMPLE_OUTPUT, ensure_ascii=False)},
        {
            "role": "user",
            "content": "\n".join(_sections(["domain:cooking"], [], *_SMALL_TALK_TURN)),
        },
        {"role": "assistant", "content": json.dumps(_EMPTY)},
        {"role": "user", "content": "\n".join(sections)},
    ]


def _said(turn: Turn) -> tuple[str, str, str]:
    """The turn's user and assistant text and tool calls, stripped of memory and redacted."""
    # One record: a secret recognised in one message is masked where another repeats it bare.
    said = redact_record(
        {
            "user": strip_injected(turn.user_message),
            "assistant": strip_injected(turn.assistant_message),
            "tool_calls": turn.tool_calls or [],
        }
    )
    calls = json.dumps(said["tool_calls"], ensure_ascii=False) if turn.tool_calls else ""
    return _clean(said["user"]), _clean(said["assistant"]), calls


def _sections(
    scope: Sequence[str],
    known: Sequence[dict[str, Any]],
    user: str,
    assistant: str,
    calls: str = "",
) -> list[str]:
    lines = "\n".join(json.dumps(k, ensure_ascii=False) for k in known) if known else "(none)"
    sections = [
        f"Scope: {', '.join(scope) or 'user:universal'}",
        f"Known beliefs (JSON lines):\n{lines}",
        f"<user>\n{user}\n</user>",
        f"<assistant>\n{assistant}\n</assistant>",
    ]
    if calls:
        sections.append(f"<tool_calls>\n{_clip(calls, MAX_TOOL_CHARS)}\n</tool_calls>")
    return sections


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
