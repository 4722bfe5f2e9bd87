"""The persona prelude: 200-400 characters, second person, from universal preferences.

Inputs are the user's live `user:universal` beliefs that describe them: preferences, expertise
and style, and anything pinned or always delivered (the context assembler leaves universal
pinned beliefs to the persona when there is one). Only beliefs every agent of the user may
see count: the persona reaches all of them, so an agent's own beliefs stay in its pinned layer.
Exploratory beliefs are left out, inferred ones become "tends to", prohibitions "never". The
text is cached with a hash of its inputs; an operator-set persona is never overwritten.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from datetime import datetime

from beliefs.model.models import utcnow
from beliefs.model.record import AnyBelief

UNIVERSAL = "user:universal"
MIN_CHARS = 200
MAX_CHARS = 400

_SUBJECT = re.compile(r"^(?:the user|user|they|he|she)\s+", re.IGNORECASE)
_NEGATION = re.compile(
    r"^(?:never|does not|doesn't|do not|don't|will not|won't|refuses to)\s+", re.IGNORECASE
)
_IRREGULAR = {"is": "are", "has": "have", "does": "do", "was": "were", "goes": "go"}
_EXPERTISE_VERBS = frozenset(
    {"know", "understand", "teach", "work", "build", "design", "write", "maintain", "lead"}
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def persona_inputs(beliefs: Iterable[AnyBelief], now: datetime | None = None) -> list[AnyBelief]:
    """The beliefs the persona summarises, most important first."""
    now = now or utcnow()
    chosen = [
        b
        for b in beliefs
        if b.is_live
        and b.agent_id is None  # every agent of the user receives the persona
        and UNIVERSAL in b.scope
        and b.type != "open_question"
        and b.epistemic_status != "exploratory"
        and b.review_state != "rejected"
        and b.delivery != "on_demand"  # those come only when asked for (recall, memory tools)
        and b.resolved_at is None
        and (b.expires_at is None or b.expires_at > now)
        and (
            b.type == "preference"
            or b.subtype in ("expertise", "style")
            or b.pinned
            or b.delivery == "always"
        )
    ]
    return sorted(
        chosen,
        key=lambda b: (
            -int(b.pinned or b.delivery == "always"),
            -int(b.user_edited),
            b.epistemic_status != "active",
            -b.reinforcement_count,
            b.created_at,
            b.id,
        ),
    )


def inputs_hash(inputs: Iterable[AnyBelief]) -> str:
    """Changes exactly when something the persona says could change."""
    rows = sorted(
        (
            b.id,
            b.content,
            b.why_it_matters,
            b.epistemic_status,
            b.type,
            b.subtype or "",
            b.pinned,
            b.delivery,
        )
        for b in inputs
    )
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:32]


def _base_form(verb: str) -> str | None:
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low.endswith("ies") and len(low) > 4:
        return low[:-3] + "y"
    if low.endswith(("sses", "shes", "ches", "xes", "zes", "oes")):
        return low[:-2]
    if low.endswith("s") and not low.endswith(("ss", "us", "is")) and len(low) > 3:
        return low[:-1]
    return None


def _lower_first(text: str) -> str:
    # "Short answers" -> "short answers", but "TypeScript" and "API" stay as written.
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        return text[0].lower() + text[1:]
    return text


def sentence(belief: AnyBelief) -> str:
    """One second-person sentence for a belief ("You prefer …", "You tend to …", "You never …")."""
    source = belief.content.strip() or belief.why_it_matters.strip()
    text = _SENTENCE_END.split(source, maxsplit=1)[0].strip().rstrip(".!;: ")
    text = _SUBJECT.sub("", text)
    negated = _NEGATION.match(text)
    if negated:
        text = text[negated.end() :]
    verb, _, rest = text.partition(" ")
    base = _base_form(verb)
    if negated:
        base = base or verb.lower()
    elif belief.subtype == "expertise" and base not in _EXPERTISE_VERBS:
        base = None  # "Databases and query tuning" is a topic, not a verb phrase
    if base is None:
        lead = "have expertise in" if belief.subtype == "expertise" else "prefer"
        phrase = f"{lead} {_lower_first(text)}"
    else:
        phrase = f"{base} {rest}".strip()
    tentative = belief.epistemic_status == "inferred"
    if negated:
        return f"You tend never to {phrase}." if tentative else f"You never {phrase}."
    return f"You tend to {phrase}." if tentative else f"You {phrase}."


def deterministic_text(inputs: Iterable[AnyBelief]) -> str:
    """A summary without a model: one sentence per input while it fits in 400 characters;
    under 200, the inputs' directives are added while they fit."""
    beliefs = list(inputs)
    parts: list[str] = []
    for belief in beliefs:
        _add(parts, sentence(belief))
    if len(" ".join(parts)) < MIN_CHARS:
        for belief in beliefs:
            why = belief.why_it_matters.strip()
            if why:
                _add(parts, why if why.endswith((".", "!", "?")) else why + ".")
    if not parts and beliefs:
        first = sentence(beliefs[0])
        parts.append(first[: MAX_CHARS - 1].rstrip() + "…")
    return " ".join(parts)


def _add(parts: list[str], text: str) -> None:
    if text in parts:
        return
    if len(" ".join([*parts, text])) <= MAX_CHARS:
        parts.append(text)


def fit(text: str) -> str:
    """A model's text cut to 400 characters at a sentence end where possible."""
    text = " ".join(text.split())
    if len(text) <= MAX_CHARS:
        return text
    cut = text[:MAX_CHARS]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    return cut[: end + 1] if end >= MIN_CHARS else cut[: MAX_CHARS - 1].rstrip() + "…"
