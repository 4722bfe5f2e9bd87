"""A baseline "model" with no understanding, built to game the evaluation: what an eval must
not reward.

It answers every turn with the user's own text as the belief, every word of it as an alias,
every capitalised word as a rejected alternative, supersedes every known belief it is shown,
and recognises small talk by one pattern.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.fakes.local_model import SeenRequest, empty

SMALL_TALK = re.compile(r"\b(thanks|thank you|bye|good night|hello|hi)\b", re.I)
_WORD = re.compile(r"\w+")
_CAPITALISED = re.compile(r"\b[A-Z][\w.+-]+")


def regex_gamer(seen: SeenRequest) -> dict[str, Any] | None:
    """The extraction JSON a regex writes for the turn it is shown."""
    if not seen.knows_rules:
        return None
    text = " ".join(seen.turn_text.split())
    out = empty()
    if not text or SMALL_TALK.search(text):
        return out
    words = list(dict.fromkeys(w.casefold() for w in _WORD.findall(text)))
    out["new_beliefs"].append(
        {
            "type": "open_question" if "?" in text else "decision",
            "canonical_name": "_".join(words[:4]) or "note",
            "content": text[:1900],
            "why_it_matters": text[:500],
            "aliases": words[:40],
            "rejected_alternatives": list(dict.fromkeys(_CAPITALISED.findall(text)))[:10],
            "confidence": 0.9,
        }
    )
    for line in seen.turn_message.splitlines():
        if line.startswith('{"id"'):
            known = json.loads(line)
            out["belief_updates"].append(
                {
                    "belief_id": known["id"],
                    "canonical_name": known["canonical_name"],
                    "change": "superseded",
                    "new_content": text[:1900],
                    "reason": text[:400],
                }
            )
    return out
